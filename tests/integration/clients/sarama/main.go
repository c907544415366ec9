// sarama-client: a line-oriented driver for sarama 1.22 (Debian's golang-github-shopify-sarama-dev),
// used by tests/integration/test_sarama.py to run a real, unmodified Go client against mockbroker.
//
// sarama never sends ApiVersions: every request version comes from -version (Config.Version).
// At 1.0.0 it starts with Metadata v5 and produces with Produce v3; it fetches with Fetch v4 and
// resolves offsets with ListOffsets v1 (see mockbroker_protocol/specs/OLD_VERSIONS.md).
//
// Usage:
//
//	sarama-client -brokers h:p[,h:p...] -topic T [-version 1.0.0] [-compression none] [-timeout 60s] MODE
//
// MODE is one of
//
//	produce    read messages from stdin, one JSON object per line
//	           {"key": "k" | null, "value": "v" | null, "headers": [["name", "value" | null], ...],
//	            "partition": p, "timestamp_ms": t}   (partition and timestamp_ms may be left out:
//	           sarama's hash partitioner and the current time are used then),
//	           send them all with one SyncProducer.SendMessages, then print one line per message:
//	           {"event": "produced", "partition": p, "offset": o, "key": ..., "value": ...}
//	consume    read every partition of T in turn, from the oldest offset up to the high watermark
//	           taken before reading it, with a plain Consumer (no group), printing one line per message:
//	           {"event": "consumed", "partition": p, "offset": o, "key": ..., "value": ..., "headers": [...]}
//	           With -expect N, fail unless exactly N messages were read.
//	roundtrip  produce, then consume with -expect set to the number of messages produced.
//
// Exit status: 0 on success, 1 on any client error or count mismatch, 2 on bad usage, 3 when the
// -timeout deadline passes. sarama's own log goes to stderr.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/Shopify/sarama"
)

// inMessage is one line of produce input. Pointers tell a JSON null (a null key or value on the
// wire) from an empty string.
type inMessage struct {
	Key       *string      `json:"key"`
	Value     *string      `json:"value"`
	Headers   [][2]*string `json:"headers"`
	Partition *int32       `json:"partition"`
	Timestamp *int64       `json:"timestamp_ms"`
}

type outMessage struct {
	Event     string       `json:"event"`
	Partition int32        `json:"partition"`
	Offset    int64        `json:"offset"`
	Key       *string      `json:"key"`
	Value     *string      `json:"value"`
	Headers   [][2]*string `json:"headers,omitempty"`
	Timestamp int64        `json:"timestamp_ms,omitempty"`
}

// explicitPartitioner sends a message to the partition its input line named (kept in Metadata),
// and falls back to sarama's default hash partitioner otherwise.
type explicitPartitioner struct{ hash sarama.Partitioner }

func newExplicitPartitioner(topic string) sarama.Partitioner {
	return &explicitPartitioner{hash: sarama.NewHashPartitioner(topic)}
}

func (p *explicitPartitioner) Partition(m *sarama.ProducerMessage, numPartitions int32) (int32, error) {
	if want, ok := m.Metadata.(int32); ok {
		if want < 0 || want >= numPartitions {
			return -1, sarama.ErrInvalidPartition
		}
		return want, nil
	}
	return p.hash.Partition(m, numPartitions)
}

func (p *explicitPartitioner) RequiresConsistency() bool { return true }

var out = json.NewEncoder(os.Stdout)

func emit(m outMessage) {
	if err := out.Encode(m); err != nil {
		log.Fatalf("writing stdout: %v", err)
	}
}

func nullable(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

func bytesOf(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

func encoder(s *string) sarama.Encoder {
	if s == nil {
		return nil
	}
	return sarama.StringEncoder(*s)
}

func readMessages(r io.Reader, topic string) ([]*sarama.ProducerMessage, error) {
	var msgs []*sarama.ProducerMessage
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for line := 1; scanner.Scan(); line++ {
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		var in inMessage
		if err := json.Unmarshal([]byte(text), &in); err != nil {
			return nil, fmt.Errorf("stdin line %d: %v", line, err)
		}
		m := &sarama.ProducerMessage{Topic: topic, Key: encoder(in.Key), Value: encoder(in.Value)}
		for _, h := range in.Headers {
			if h[0] == nil {
				return nil, fmt.Errorf("stdin line %d: a header name is null", line)
			}
			m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(*h[0]), Value: bytesOf(h[1])})
		}
		if in.Partition != nil {
			m.Metadata = *in.Partition
		}
		if in.Timestamp != nil {
			m.Timestamp = time.Unix(0, *in.Timestamp*int64(time.Millisecond))
		}
		msgs = append(msgs, m)
	}
	return msgs, scanner.Err()
}

func produce(brokers []string, topic string, config *sarama.Config, msgs []*sarama.ProducerMessage) error {
	producer, err := sarama.NewSyncProducer(brokers, config)
	if err != nil {
		return fmt.Errorf("new sync producer: %v", err)
	}
	sendErr := producer.SendMessages(msgs)
	closeErr := producer.Close()
	if sendErr != nil {
		// One line per distinct (partition, error), not one per message.
		var perrs sarama.ProducerErrors
		if errors.As(sendErr, &perrs) {
			type failure struct {
				partition int32
				err       string
			}
			counts := map[failure]int{}
			var order []failure
			for _, pe := range perrs {
				f := failure{pe.Msg.Partition, pe.Err.Error()}
				if counts[f] == 0 {
					order = append(order, f)
				}
				counts[f]++
			}
			for _, f := range order {
				log.Printf("produce error: partition %d: %d message(s): %s", f.partition, counts[f], f.err)
			}
		}
		return fmt.Errorf("send messages: %v", sendErr)
	}
	if closeErr != nil {
		return fmt.Errorf("close producer: %v", closeErr)
	}
	for _, m := range msgs {
		o := outMessage{Event: "produced", Partition: m.Partition, Offset: m.Offset}
		if m.Key != nil {
			b, _ := m.Key.Encode()
			o.Key = nullable(b)
		}
		if m.Value != nil {
			b, _ := m.Value.Encode()
			o.Value = nullable(b)
		}
		emit(o)
	}
	return nil
}

// consume reads partition after partition, each from its oldest offset up to the high watermark
// that ListOffsets reported before reading it. There is no consumer group: sarama's plain Consumer
// fetches from the partition leaders directly.
func consume(brokers []string, topic string, config *sarama.Config, expect int) error {
	client, err := sarama.NewClient(brokers, config)
	if err != nil {
		return fmt.Errorf("new client: %v", err)
	}
	defer client.Close()
	consumer, err := sarama.NewConsumerFromClient(client)
	if err != nil {
		return fmt.Errorf("new consumer: %v", err)
	}
	defer consumer.Close()
	partitions, err := client.Partitions(topic)
	if err != nil {
		return fmt.Errorf("partitions of %s: %v", topic, err)
	}
	total := 0
	for _, p := range partitions {
		oldest, err := client.GetOffset(topic, p, sarama.OffsetOldest)
		if err != nil {
			return fmt.Errorf("oldest offset of %s/%d: %v", topic, p, err)
		}
		newest, err := client.GetOffset(topic, p, sarama.OffsetNewest)
		if err != nil {
			return fmt.Errorf("newest offset of %s/%d: %v", topic, p, err)
		}
		if newest <= oldest {
			continue
		}
		n, err := consumePartition(consumer, topic, p, newest)
		total += n
		if err != nil {
			return err
		}
	}
	if expect >= 0 && total != expect {
		return fmt.Errorf("consumed %d messages, expected %d", total, expect)
	}
	return nil
}

func consumePartition(consumer sarama.Consumer, topic string, p int32, end int64) (int, error) {
	pc, err := consumer.ConsumePartition(topic, p, sarama.OffsetOldest)
	if err != nil {
		return 0, fmt.Errorf("consume %s/%d: %v", topic, p, err)
	}
	defer pc.Close()
	n := 0
	for {
		select {
		case m := <-pc.Messages():
			o := outMessage{
				Event: "consumed", Partition: m.Partition, Offset: m.Offset,
				Key: nullable(m.Key), Value: nullable(m.Value),
			}
			for _, h := range m.Headers {
				o.Headers = append(o.Headers, [2]*string{nullable(h.Key), nullable(h.Value)})
			}
			if !m.Timestamp.IsZero() {
				o.Timestamp = m.Timestamp.UnixNano() / int64(time.Millisecond)
			}
			emit(o)
			n++
			if m.Offset >= end-1 {
				return n, nil
			}
		case cerr := <-pc.Errors():
			return n, fmt.Errorf("consume %s/%d: %v", topic, p, cerr)
		}
	}
}

func main() {
	brokerList := flag.String("brokers", "", "bootstrap servers, comma separated")
	topic := flag.String("topic", "", "topic")
	version := flag.String("version", "1.0.0", "sarama Config.Version (the Kafka version whose request versions sarama sends)")
	compression := flag.String("compression", "none", "producer compression: none, gzip, snappy, lz4, zstd")
	expect := flag.Int("expect", -1, "consume: fail unless exactly this many messages are read (-1: any)")
	timeout := flag.Duration("timeout", 60*time.Second, "overall deadline; exit 3 when it passes")
	flag.Parse()
	log.SetOutput(os.Stderr)
	log.SetPrefix("[sarama-client] ")
	sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags|log.Lmicroseconds)

	if flag.NArg() != 1 || *brokerList == "" || *topic == "" {
		fmt.Fprintln(os.Stderr, "usage: sarama-client -brokers h:p[,h:p] -topic T [flags] produce|consume|roundtrip")
		os.Exit(2)
	}
	mode := flag.Arg(0)
	kafkaVersion, err := sarama.ParseKafkaVersion(*version)
	if err != nil {
		fmt.Fprintf(os.Stderr, "-version: %v\n", err)
		os.Exit(2)
	}
	config := sarama.NewConfig()
	config.ClientID = "mockbroker-sarama-test"
	config.Version = kafkaVersion
	config.Net.DialTimeout = 10 * time.Second
	config.Producer.RequiredAcks = sarama.WaitForAll
	config.Producer.Return.Successes = true
	config.Producer.Partitioner = newExplicitPartitioner
	config.Consumer.Return.Errors = true
	switch *compression {
	case "none":
		config.Producer.Compression = sarama.CompressionNone
	case "gzip":
		config.Producer.Compression = sarama.CompressionGZIP
	case "snappy":
		config.Producer.Compression = sarama.CompressionSnappy
	case "lz4":
		config.Producer.Compression = sarama.CompressionLZ4
	case "zstd":
		config.Producer.Compression = sarama.CompressionZSTD
	default:
		fmt.Fprintf(os.Stderr, "-compression: unknown codec %q\n", *compression)
		os.Exit(2)
	}
	if err := config.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "config: %v\n", err)
		os.Exit(2)
	}
	brokers := strings.Split(*brokerList, ",")

	done := make(chan error, 1)
	go func() {
		switch mode {
		case "produce", "roundtrip":
			msgs, err := readMessages(os.Stdin, *topic)
			if err != nil {
				done <- err
				return
			}
			if err := produce(brokers, *topic, config, msgs); err != nil {
				done <- err
				return
			}
			if mode == "roundtrip" {
				done <- consume(brokers, *topic, config, len(msgs))
				return
			}
			done <- nil
		case "consume":
			done <- consume(brokers, *topic, config, *expect)
		default:
			done <- fmt.Errorf("unknown mode %q", mode)
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			log.Printf("error: %v", err)
			os.Exit(1)
		}
	case <-time.After(*timeout):
		log.Printf("error: deadline of %v passed", *timeout)
		os.Exit(3)
	}
}
