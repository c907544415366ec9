// franz-go-conformance: the conformance driver for franz-go's kgo client (the version go.mod pins),
// speaking the JSON-lines protocol of docs/conformance.md: commands on stdin, events on stdout,
// kgo's own log on stderr. Built by `make go-drivers` into build/go-drivers/ from the Go module proxy.
//
// Usage: franz-go-conformance --bootstrap HOST:PORT[,...] --client-id ID [--group-protocol classic|consumer]
// [--config KEY=VALUE ...] (TLS and SASL settings: security.go).
//
// classic: kgo's client-side balancers (range: eager; cooperative-sticky: KIP-429). consumer:
// KIP-848 (kgo.ServerSideBalancer with the sticky balancer, which asks the broker's "uniform"
// assignor). kgo is goroutine-safe: one goroutine polls and emits records, commands run beside it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const protocolVersion = 1

var (
	outMu sync.Mutex
	out   = json.NewEncoder(os.Stdout)
)

func emit(event string, fields map[string]any) {
	if fields == nil {
		fields = map[string]any{}
	}
	fields["event"] = event
	outMu.Lock()
	defer outMu.Unlock()
	if err := out.Encode(fields); err != nil {
		fmt.Fprintf(os.Stderr, "writing stdout: %v\n", err)
		os.Exit(1)
	}
}

type record struct {
	Key       *string `json:"key"`
	Value     *string `json:"value"`
	Partition *int32  `json:"partition"`
}

type command struct {
	Cmd               string           `json:"cmd"`
	Topic             string           `json:"topic"`
	Group             string           `json:"group"`
	Records           []record         `json:"records"`
	Compression       string           `json:"compression"`
	Idempotent        bool             `json:"idempotent"`
	Partitions        []int32          `json:"partitions"`
	Partition         int32            `json:"partition"`
	Offset            int64            `json:"offset"`
	Offsets           map[string]int64 `json:"offsets"`
	SessionTimeoutMs  int              `json:"session_timeout_ms"`
	HeartbeatInterval int              `json:"heartbeat_interval_ms"`
	Assignor          string           `json:"assignor"`
	InstanceID        string           `json:"instance_id"`
	MaxRecords        int              `json:"max_records"` // share_subscribe
	Acks              [][]any          `json:"acks"`        // share_ack: [partition, offset, kind]
}

var codecs = map[string]kgo.CompressionCodec{
	"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
	"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

type driver struct {
	seeds         []string
	security      []kgo.Opt
	clientID      string
	groupProtocol string
	producers     map[string]*kgo.Client
	consumer      *kgo.Client
	topic         string
	polling       chan struct{}
	stop          context.CancelFunc
	share         *shareConsumer // share.go (KIP-932)

	mu         sync.Mutex
	assignment map[int32]bool
	consumed   map[int32]int64 // partition -> next offset
}

type logger struct{}

func (logger) Level() kgo.LogLevel { return kgo.LogLevelWarn }
func (logger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	fmt.Fprintln(os.Stderr, append([]any{time.Now().Format("15:04:05.000"), level, msg}, keyvals...)...)
}

func (d *driver) base() []kgo.Opt {
	return append([]kgo.Opt{
		kgo.SeedBrokers(d.seeds...), kgo.ClientID(d.clientID), kgo.WithLogger(logger{}),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		kgo.MetadataMinAge(100 * time.Millisecond), kgo.MetadataMaxAge(2 * time.Second),
		kgo.FetchMaxWait(100 * time.Millisecond),
	}, d.security...)
}

func (d *driver) produce(cmd command) (map[string]any, error) {
	codec := cmd.Compression
	if codec == "" {
		codec = "none"
	}
	key := codec + "/" + strconv.FormatBool(cmd.Idempotent)
	cl, ok := d.producers[key]
	if !ok {
		c, known := codecs[codec]
		if !known {
			return nil, fmt.Errorf("unknown codec %q", codec)
		}
		opts := append(d.base(), kgo.ProducerBatchCompression(c), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
		if !cmd.Idempotent { // kgo writes idempotently unless told not to
			opts = append(opts, kgo.DisableIdempotentWrite())
		}
		var err error
		if cl, err = kgo.NewClient(opts...); err != nil {
			return nil, err
		}
		d.producers[key] = cl
	}
	rs := make([]*kgo.Record, len(cmd.Records))
	for i, r := range cmd.Records {
		rec := &kgo.Record{Topic: cmd.Topic}
		if r.Key != nil {
			rec.Key = []byte(*r.Key)
		}
		if r.Value != nil {
			rec.Value = []byte(*r.Value)
		}
		if r.Partition != nil {
			rec.Partition = *r.Partition
		}
		rs[i] = rec
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	results := cl.ProduceSync(ctx, rs...)
	if err := results.FirstErr(); err != nil {
		return nil, err
	}
	// ProduceSync's results come in the order the records completed, not the order given.
	index := make(map[*kgo.Record]int, len(rs))
	for i, r := range rs {
		index[r] = i
	}
	offsets := make([][2]int64, len(rs))
	for _, r := range results {
		offsets[index[r.Record]] = [2]int64{int64(r.Record.Partition), r.Record.Offset}
	}
	return map[string]any{"offsets": offsets}, nil
}

func sorted(m map[int32]bool) []int32 {
	out := []int32{}
	for p, in := range m {
		if in {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// changed records a rebalance callback's partitions and emits the event.
func (d *driver) changed(event string, cl *kgo.Client, parts map[string][]int32) {
	d.mu.Lock()
	list := append([]int32{}, parts[d.topic]...)
	sort.Slice(list, func(i, j int) bool { return list[i] < list[j] })
	for _, p := range list {
		if event == "assigned" {
			d.assignment[p] = true
		} else {
			delete(d.assignment, p)
		}
	}
	now := sorted(d.assignment)
	d.mu.Unlock()
	member, generation := cl.GroupMetadata()
	field := "removed"
	if event == "assigned" {
		field = "added"
	}
	emit(event, map[string]any{field: list, "partitions": now, "member_id": member, "generation": generation})
}

func (d *driver) subscribe(cmd command) error {
	d.topic = cmd.Topic
	opts := append(d.base(), kgo.ConsumerGroup(cmd.Group), kgo.ConsumeTopics(cmd.Topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.OnPartitionsAssigned(func(_ context.Context, cl *kgo.Client, p map[string][]int32) { d.changed("assigned", cl, p) }),
		kgo.OnPartitionsRevoked(func(_ context.Context, cl *kgo.Client, p map[string][]int32) { d.changed("revoked", cl, p) }),
		kgo.OnPartitionsLost(func(_ context.Context, cl *kgo.Client, p map[string][]int32) { d.changed("lost", cl, p) }))
	if cmd.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(cmd.InstanceID))
	}
	if d.groupProtocol == "consumer" {
		opts = append(opts, kgo.Balancers(kgo.StickyBalancer()), kgo.ServerSideBalancer())
	} else {
		if cmd.SessionTimeoutMs > 0 {
			opts = append(opts, kgo.SessionTimeout(time.Duration(cmd.SessionTimeoutMs)*time.Millisecond))
		}
		if cmd.HeartbeatInterval > 0 {
			opts = append(opts, kgo.HeartbeatInterval(time.Duration(cmd.HeartbeatInterval)*time.Millisecond))
		}
		balancer := kgo.RangeBalancer()
		switch cmd.Assignor {
		case "cooperative-sticky":
			balancer = kgo.CooperativeStickyBalancer()
		case "roundrobin":
			balancer = kgo.RoundRobinBalancer()
		}
		opts = append(opts, kgo.Balancers(balancer))
	}
	return d.start(opts)
}

func (d *driver) assign(cmd command) error {
	d.topic = cmd.Topic
	parts := map[int32]kgo.Offset{}
	d.mu.Lock()
	for _, p := range cmd.Partitions {
		parts[p] = kgo.NewOffset().AtStart()
		d.assignment[p] = true
	}
	d.mu.Unlock()
	return d.start(append(d.base(), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cmd.Topic: parts})))
}

// start makes the consuming client and its poll loop.
func (d *driver) start(opts []kgo.Opt) error {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.consumer, d.stop, d.polling = cl, cancel, make(chan struct{})
	go func() {
		defer close(d.polling)
		last := ""
		for ctx.Err() == nil {
			fetches := cl.PollFetches(ctx)
			if fetches.IsClientClosed() {
				return
			}
			emitFetchErrors(fetches, &last)
			fetches.EachRecord(func(r *kgo.Record) {
				d.mu.Lock()
				d.consumed[r.Partition] = r.Offset + 1
				d.mu.Unlock()
				emit("record", map[string]any{"partition": r.Partition, "offset": r.Offset, "key": text(r.Key), "value": text(r.Value)})
			})
		}
	}()
	return nil
}

// emitFetchErrors emits a poll's errors as client_error events, except a cancelled context (the
// client stopping) and an error equal to the last one emitted (*last), which kgo repeats each poll.
func emitFetchErrors(fetches kgo.Fetches, last *string) {
	fetches.EachError(func(t string, p int32, err error) {
		if errors.Is(err, context.Canceled) || err.Error() == *last {
			return
		}
		*last = err.Error()
		emit("client_error", map[string]any{"error": fmt.Sprintf("%T", err), "message": err.Error(), "partition": p})
	})
}

func text(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func (d *driver) commit(cmd command) (map[string]any, error) {
	if d.consumer == nil {
		return nil, errors.New("no consumer")
	}
	wanted := map[int32]int64{}
	for p, o := range cmd.Offsets {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, err
		}
		wanted[int32(n)] = o
	}
	d.mu.Lock()
	if len(wanted) == 0 {
		for p, o := range d.consumed {
			if d.assignment[p] {
				wanted[p] = o
			}
		}
	}
	d.mu.Unlock()
	offsets := map[int32]kgo.EpochOffset{}
	answer := map[string]int64{}
	for p, o := range wanted {
		offsets[p] = kgo.EpochOffset{Epoch: -1, Offset: o}
		answer[strconv.Itoa(int(p))] = o
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var failure error
	d.consumer.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{d.topic: offsets},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				failure = err
				return
			}
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					if p.ErrorCode != 0 && failure == nil {
						failure = fmt.Errorf("partition %d: error code %d", p.Partition, p.ErrorCode)
					}
				}
			}
		})
	if failure != nil {
		return nil, failure
	}
	return map[string]any{"offsets": answer}, nil
}

func (d *driver) close() {
	if d.consumer != nil {
		d.stop()
		<-d.polling
		d.consumer.Close() // a dynamic member leaves its group; a static one stays (KIP-345)
	}
	if d.share != nil {
		d.share.close()
	}
	for _, p := range d.producers {
		p.Close()
	}
}

func version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/twmb/franz-go" {
				return strings.TrimPrefix(dep.Version, "v")
			}
		}
	}
	return "unknown"
}

func (d *driver) handle(cmd command) {
	var fields map[string]any
	var err error
	event := map[string]string{"produce": "produced", "subscribe": "subscribed", "assign": "assigned",
		"commit": "committed", "seek": "done", "pause": "done", "resume": "done",
		"share_subscribe": "subscribed", "share_ack": "share_acked"}[cmd.Cmd]
	switch cmd.Cmd {
	case "produce":
		fields, err = d.produce(cmd)
	case "subscribe":
		err = d.subscribe(cmd)
	case "assign":
		err = d.assign(cmd)
		fields = map[string]any{"added": cmd.Partitions, "partitions": cmd.Partitions}
	case "commit":
		fields, err = d.commit(cmd)
	case "share_subscribe":
		err = d.shareSubscribe(cmd)
	case "share_ack":
		fields, err = d.shareAck(cmd)
	case "seek":
		d.consumer.SetOffsets(map[string]map[int32]kgo.EpochOffset{d.topic: {cmd.Partition: {Epoch: -1, Offset: cmd.Offset}}})
		fields = map[string]any{"cmd": "seek"}
	case "pause":
		d.consumer.PauseFetchPartitions(map[string][]int32{d.topic: cmd.Partitions})
		fields = map[string]any{"cmd": "pause"}
	case "resume":
		d.consumer.ResumeFetchPartitions(map[string][]int32{d.topic: cmd.Partitions})
		fields = map[string]any{"cmd": "resume"}
	default:
		emit("unsupported", map[string]any{"cmd": cmd.Cmd, "reason": "unknown command " + cmd.Cmd})
		return
	}
	if err != nil {
		emit(cmd.Cmd+"_failed", map[string]any{"error": fmt.Sprintf("%T", err), "message": err.Error()})
		return
	}
	emit(event, fields)
}

func main() {
	bootstrap := flag.String("bootstrap", "", "bootstrap servers, comma separated")
	clientID := flag.String("client-id", "", "client.id")
	groupProtocol := flag.String("group-protocol", "classic", "classic or consumer (KIP-848)")
	config := configFlag{}
	flag.Var(config, "config", "KEY=VALUE, librdkafka's names (security.go); repeatable")
	flag.Parse()
	security, err := securityOpts(config)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *bootstrap == "" || *clientID == "" || (*groupProtocol != "classic" && *groupProtocol != "consumer") {
		fmt.Fprintln(os.Stderr, "usage: franz-go-conformance --bootstrap HOST:PORT --client-id ID [--group-protocol classic|consumer]")
		os.Exit(2)
	}
	d := &driver{seeds: strings.Split(*bootstrap, ","), security: security, clientID: *clientID, groupProtocol: *groupProtocol,
		producers: map[string]*kgo.Client{}, assignment: map[int32]bool{}, consumed: map[int32]int64{}}
	unsupported := map[string]string{}
	if *groupProtocol == "consumer" {
		// kgo's Close leaves no group as a static member ("If you are using static membership, Close
		// does not send a leave group request"), under KIP-848 too: no heartbeat with epoch -2, so
		// the restarted instance is refused (UNRELEASED_INSTANCE_ID) until the old member's session
		// expires, and what happens then depends on timing.
		unsupported["static-membership"] = "franz-go's Close sends no KIP-848 static leave (epoch -2): a restarted instance " +
			"is refused with UNRELEASED_INSTANCE_ID until the old member's session expires"
	}
	emit("hello", map[string]any{"protocol": protocolVersion, "client": "franz-go (group.protocol=" + *groupProtocol + ")",
		"version": version(), "unsupported": unsupported, "share": true})
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		var cmd command
		if err := json.Unmarshal([]byte(line), &cmd); err != nil {
			emit("protocol_error", map[string]any{"message": err.Error(), "line": line})
			continue
		}
		if cmd.Cmd == "close" {
			break
		}
		d.handle(cmd)
	}
	d.close()
	emit("closed", nil)
}
