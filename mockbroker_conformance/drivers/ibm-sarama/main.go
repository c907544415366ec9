// ibm-sarama-conformance: the conformance driver for the newest IBM/sarama (the version go.mod
// pins), speaking the JSON-lines protocol of docs/conformance.md: commands on stdin, events on
// stdout, sarama's own log on stderr. Built by `make go-drivers` from the Go module proxy. It is
// ../sarama/main.go (Debian's sarama 1.22) moved to the new module path, with what sarama learnt
// since: static membership (Consumer.Group.InstanceId), Pause/Resume, a synchronous Commit.
//
// Usage: ibm-sarama-conformance --bootstrap HOST:PORT[,...] --client-id ID [--version 4.3.1]
//
// Config.Version is 4.3.1 (the broker's; sarama picks each request's version from it). Not
// supported here: seeking a running claim (ResetOffset only moves the next session's start), and
// cooperative rebalancing, which this driver does not drive (sarama's cooperative mode, new in
// its 1.6x line, hands claims over inside one session; the eager handler below does not).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"runtime/debug"
)

const protocolVersion = 1

var (
	outMu sync.Mutex
	out   = json.NewEncoder(os.Stdout)
)

func emit(event string, fields map[string]interface{}) {
	if fields == nil {
		fields = map[string]interface{}{}
	}
	fields["event"] = event
	outMu.Lock()
	defer outMu.Unlock()
	if err := out.Encode(fields); err != nil {
		log.Fatalf("writing stdout: %v", err)
	}
}

type command struct {
	Cmd               string           `json:"cmd"`
	Topic             string           `json:"topic"`
	Group             string           `json:"group"`
	Records           []record         `json:"records"`
	Compression       string           `json:"compression"`
	Idempotent        bool             `json:"idempotent"`
	Partitions        []int32          `json:"partitions"`
	Offsets           map[string]int64 `json:"offsets"`
	SessionTimeoutMs  int              `json:"session_timeout_ms"`
	HeartbeatInterval int              `json:"heartbeat_interval_ms"`
	Assignor          string           `json:"assignor"`
	InstanceID        string           `json:"instance_id"`
}

type record struct {
	Key       *string `json:"key"`
	Value     *string `json:"value"`
	Partition *int32  `json:"partition"`
}

var unsupported = map[string]string{
	"cooperative": "this driver runs sarama's eager consumer-group protocol only (its cooperative mode is not driven)",
	"seek":        "sarama cannot seek a running consumer-group claim (ResetOffset only moves the next session's start)",
}

type driver struct {
	brokers   []string
	clientID  string
	version   sarama.KafkaVersion
	producers map[string]sarama.SyncProducer
	client    sarama.Client
	group     sarama.ConsumerGroup
	consumer  sarama.Consumer
	cancel    context.CancelFunc
	done      chan struct{}
	topic     string
	groupID   string

	mu         sync.Mutex
	session    sarama.ConsumerGroupSession
	assignment []int32
	consumed   map[int32]int64 // partition -> next offset
}

func (d *driver) config() *sarama.Config {
	c := sarama.NewConfig()
	c.ClientID = d.clientID
	c.Version = d.version
	c.Net.DialTimeout = 5 * time.Second
	c.Metadata.Retry.Backoff = 50 * time.Millisecond
	c.Producer.RequiredAcks = sarama.WaitForAll
	c.Producer.Return.Successes = true
	c.Producer.Retry.Backoff = 50 * time.Millisecond
	c.Producer.Partitioner = sarama.NewManualPartitioner
	c.Consumer.Return.Errors = true
	c.Consumer.Offsets.Initial = sarama.OffsetOldest
	c.Consumer.Offsets.AutoCommit.Enable = false // commits are the commit command's
	c.Consumer.Retry.Backoff = 50 * time.Millisecond
	c.Consumer.MaxWaitTime = 200 * time.Millisecond
	return c
}

var codecs = map[string]sarama.CompressionCodec{
	"none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP, "snappy": sarama.CompressionSnappy,
	"lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD,
}

func (d *driver) produce(cmd command) (map[string]interface{}, error) {
	codec := cmd.Compression
	if codec == "" {
		codec = "none"
	}
	key := fmt.Sprintf("%s/%v", codec, cmd.Idempotent)
	producer, ok := d.producers[key]
	if !ok {
		c := d.config()
		compression, known := codecs[codec]
		if !known {
			return nil, fmt.Errorf("unknown codec %q", codec)
		}
		c.Producer.Compression = compression
		if cmd.Idempotent {
			c.Producer.Idempotent = true
			c.Net.MaxOpenRequests = 1
		}
		var err error
		if producer, err = sarama.NewSyncProducer(d.brokers, c); err != nil {
			return nil, err
		}
		d.producers[key] = producer
	}
	msgs := make([]*sarama.ProducerMessage, len(cmd.Records))
	for i, r := range cmd.Records {
		m := &sarama.ProducerMessage{Topic: cmd.Topic}
		if r.Key != nil {
			m.Key = sarama.StringEncoder(*r.Key)
		}
		if r.Value != nil {
			m.Value = sarama.StringEncoder(*r.Value)
		}
		if r.Partition != nil {
			m.Partition = *r.Partition
		}
		msgs[i] = m
	}
	if err := producer.SendMessages(msgs); err != nil {
		if errs, ok := err.(sarama.ProducerErrors); ok && len(errs) > 0 {
			return nil, fmt.Errorf("%d of %d messages failed, the first: %v", len(errs), len(msgs), errs[0].Err)
		}
		return nil, err
	}
	offsets := make([][2]int64, len(msgs))
	for i, m := range msgs {
		offsets[i] = [2]int64{int64(m.Partition), m.Offset}
	}
	return map[string]interface{}{"offsets": offsets}, nil
}

func text(b []byte) interface{} {
	if b == nil {
		return nil
	}
	return string(b)
}

func (d *driver) record(m *sarama.ConsumerMessage) {
	d.mu.Lock()
	d.consumed[m.Partition] = m.Offset + 1
	d.mu.Unlock()
	emit("record", map[string]interface{}{"partition": m.Partition, "offset": m.Offset, "key": text(m.Key), "value": text(m.Value)})
}

// handler is the consumer-group callback set: Setup and Cleanup bracket each generation.
type handler struct{ d *driver }

func (h handler) Setup(s sarama.ConsumerGroupSession) error {
	parts := append([]int32(nil), s.Claims()[h.d.topic]...)
	sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
	h.d.mu.Lock()
	h.d.session, h.d.assignment = s, parts
	h.d.mu.Unlock()
	emit("assigned", map[string]interface{}{"added": parts, "partitions": parts, "member_id": s.MemberID(), "generation": s.GenerationID()})
	return nil
}

func (h handler) Cleanup(s sarama.ConsumerGroupSession) error {
	h.d.mu.Lock()
	removed := h.d.assignment
	h.d.session, h.d.assignment = nil, nil
	h.d.mu.Unlock()
	emit("revoked", map[string]interface{}{"removed": removed, "partitions": []int32{}, "member_id": s.MemberID(), "generation": s.GenerationID()})
	return nil
}

func (h handler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		h.d.record(m)
	}
	return nil
}

var strategies = map[string]sarama.BalanceStrategy{
	"range": sarama.BalanceStrategyRange, "roundrobin": sarama.BalanceStrategyRoundRobin,
}

func (d *driver) subscribe(cmd command) error {
	c := d.config()
	if cmd.SessionTimeoutMs > 0 {
		c.Consumer.Group.Session.Timeout = time.Duration(cmd.SessionTimeoutMs) * time.Millisecond
	}
	if cmd.HeartbeatInterval > 0 {
		c.Consumer.Group.Heartbeat.Interval = time.Duration(cmd.HeartbeatInterval) * time.Millisecond
	}
	if s, ok := strategies[cmd.Assignor]; ok {
		c.Consumer.Group.Rebalance.Strategy = s
	}
	c.Consumer.Group.Rebalance.Retry.Backoff = 100 * time.Millisecond
	if cmd.InstanceID != "" {
		c.Consumer.Group.InstanceId = cmd.InstanceID
	}
	client, err := sarama.NewClient(d.brokers, c)
	if err != nil {
		return err
	}
	group, err := sarama.NewConsumerGroupFromClient(cmd.Group, client)
	if err != nil {
		return err
	}
	d.client, d.group, d.topic, d.groupID = client, group, cmd.Topic, cmd.Group
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel, d.done = cancel, make(chan struct{})
	go func() {
		for err := range group.Errors() {
			emit("client_error", map[string]interface{}{"error": "sarama", "message": err.Error()})
		}
	}()
	go func() {
		defer close(d.done)
		for ctx.Err() == nil { // Consume returns at each rebalance: join again
			if err := group.Consume(ctx, []string{cmd.Topic}, handler{d}); err != nil {
				emit("client_error", map[string]interface{}{"error": "sarama", "message": err.Error()})
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	return nil
}

func (d *driver) assign(cmd command) error {
	consumer, err := sarama.NewConsumer(d.brokers, d.config())
	if err != nil {
		return err
	}
	d.consumer, d.topic = consumer, cmd.Topic
	for _, p := range cmd.Partitions {
		pc, err := consumer.ConsumePartition(cmd.Topic, p, sarama.OffsetOldest)
		if err != nil {
			return err
		}
		go func() {
			for m := range pc.Messages() {
				d.record(m)
			}
		}()
		go func() {
			for err := range pc.Errors() {
				emit("client_error", map[string]interface{}{"error": "sarama", "message": err.Error()})
			}
		}()
	}
	return nil
}

// commit marks the offsets (explicit, or the next offset of each consumed partition still
// assigned) and waits until sarama's offset manager has committed them.
func (d *driver) commit(cmd command) (map[string]interface{}, error) {
	d.mu.Lock()
	session := d.session
	wanted := map[int32]int64{}
	for p, o := range cmd.Offsets {
		var partition int32
		fmt.Sscan(p, &partition)
		wanted[partition] = o
	}
	if len(wanted) == 0 {
		for _, p := range d.assignment {
			if o, ok := d.consumed[p]; ok {
				wanted[p] = o
			}
		}
	}
	d.mu.Unlock()
	if session == nil {
		return nil, fmt.Errorf("no current generation: the member is not assigned")
	}
	// Mark and commit on the current session, and again on the next one until the group's
	// committed offsets show them: a commit in a session that a rebalance (a coordinator move,
	// say) ended is dropped. The deadline is below the runner's, so a failure is answered.
	deadline := time.Now().Add(15 * time.Second)
	for {
		d.mu.Lock()
		session = d.session
		d.mu.Unlock()
		if session != nil {
			for p, o := range wanted {
				// MarkOffset only moves forwards and ResetOffset only backwards: together, exactly o.
				session.MarkOffset(d.topic, p, o, "")
				session.ResetOffset(d.topic, p, o, "")
			}
			session.Commit() // synchronous; its errors go to the group's Errors()
		}
		if ok, err := d.committedAtLeast(wanted); ok {
			break
		} else if time.Now().After(deadline) {
			return nil, fmt.Errorf("offsets %v not committed after 15s (last check: %v)", wanted, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	offsets := map[string]int64{}
	for p, o := range wanted {
		offsets[fmt.Sprint(p)] = o
	}
	return map[string]interface{}{"offsets": offsets}, nil
}

func (d *driver) committedAtLeast(wanted map[int32]int64) (bool, error) {
	if err := d.client.RefreshCoordinator(d.groupID); err != nil {
		return false, err
	}
	coordinator, err := d.client.Coordinator(d.groupID)
	if err != nil {
		return false, err
	}
	req := &sarama.OffsetFetchRequest{ConsumerGroup: d.groupID, Version: 1}
	for p := range wanted {
		req.AddPartition(d.topic, p)
	}
	resp, err := coordinator.FetchOffset(req)
	if err != nil {
		return false, err
	}
	for p, o := range wanted {
		block := resp.GetBlock(d.topic, p)
		if block == nil || block.Err != sarama.ErrNoError || block.Offset != o {
			return false, nil
		}
	}
	return true, nil
}

func (d *driver) close() {
	if d.cancel != nil {
		d.cancel()
		d.group.Close() // LeaveGroup
		<-d.done
		d.client.Close()
	}
	if d.consumer != nil {
		d.consumer.Close()
	}
	for _, p := range d.producers {
		p.Close()
	}
}

func main() {
	bootstrap := flag.String("bootstrap", "", "bootstrap servers, comma separated")
	clientID := flag.String("client-id", "", "client.id")
	versionFlag := flag.String("version", "4.3.1", "sarama Config.Version")
	flag.Parse()
	if *bootstrap == "" || *clientID == "" {
		fmt.Fprintln(os.Stderr, "usage: ibm-sarama-conformance --bootstrap HOST:PORT --client-id ID")
		os.Exit(2)
	}
	version, err := sarama.ParseKafkaVersion(*versionFlag)
	if err != nil {
		fmt.Fprintf(os.Stderr, "--version: %v\n", err)
		os.Exit(2)
	}
	sarama.Logger = log.New(os.Stderr, "[sarama] ", log.LstdFlags|log.Lmicroseconds)
	d := &driver{brokers: strings.Split(*bootstrap, ","), clientID: *clientID, version: version,
		producers: map[string]sarama.SyncProducer{}, consumed: map[int32]int64{}}
	emit("hello", map[string]interface{}{"protocol": protocolVersion, "client": "sarama",
		"version": moduleVersion() + " (Config.Version " + version.String() + ")", "unsupported": unsupported})
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		var cmd command
		if err := json.Unmarshal([]byte(line), &cmd); err != nil {
			emit("protocol_error", map[string]interface{}{"message": err.Error(), "line": line})
			continue
		}
		if cmd.Cmd == "close" {
			break
		}
		var fields map[string]interface{}
		var event string
		switch cmd.Cmd {
		case "produce":
			event = "produced"
			fields, err = d.produce(cmd)
		case "subscribe":
			event, err = "subscribed", d.subscribe(cmd)
		case "assign":
			event, err = "assigned", d.assign(cmd)
			fields = map[string]interface{}{"added": cmd.Partitions, "partitions": cmd.Partitions}
		case "commit":
			event = "committed"
			fields, err = d.commit(cmd)
		case "pause", "resume":
			if d.group == nil {
				err = fmt.Errorf("no consumer group")
			} else if cmd.Cmd == "pause" {
				d.group.Pause(map[string][]int32{d.topic: cmd.Partitions})
			} else {
				d.group.Resume(map[string][]int32{d.topic: cmd.Partitions})
			}
			event, fields = "done", map[string]interface{}{"cmd": cmd.Cmd}
		case "seek":
			emit("unsupported", map[string]interface{}{"cmd": cmd.Cmd, "reason": unsupported["seek"]})
			continue
		default:
			emit("unsupported", map[string]interface{}{"cmd": cmd.Cmd, "reason": "unknown command " + cmd.Cmd})
			continue
		}
		if err != nil {
			emit(cmd.Cmd+"_failed", map[string]interface{}{"error": "sarama", "message": err.Error()})
			continue
		}
		emit(event, fields)
	}
	d.close()
	emit("closed", nil)
}

func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/IBM/sarama" {
				return strings.TrimPrefix(dep.Version, "v")
			}
		}
	}
	return "unknown"
}
