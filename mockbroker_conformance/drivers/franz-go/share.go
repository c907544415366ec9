// The franz-go driver's share-group commands (KIP-932, docs/conformance.md): share_subscribe
// makes a kgo client of a share group (kgo.ShareGroup), whose records are emitted as share_record
// events and stay acquired until share_ack marks them (Record.Ack: accept, release, reject) and
// flushes the acknowledgements (Client.FlushAcks).
//
// kgo's PollFetches accepts every record of the previous poll that was not marked, so the poll
// loop polls only when the driver holds no record.
package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type shareConsumer struct {
	client  *kgo.Client
	stop    context.CancelFunc
	polling chan struct{}

	mu     sync.Mutex
	held   map[string]*kgo.Record // "partition:offset" -> a record delivered and not acknowledged
	failed []string               // acknowledgement errors the broker reported (ShareAckCallback)
}

var ackStatuses = map[string]kgo.AckStatus{"accept": kgo.AckAccept, "release": kgo.AckRelease, "reject": kgo.AckReject}

func (d *driver) shareSubscribe(cmd command) error {
	s := &shareConsumer{held: map[string]*kgo.Record{}, polling: make(chan struct{})}
	maxRecords := cmd.MaxRecords
	if maxRecords <= 0 {
		maxRecords = 500
	}
	opts := append(d.base(), kgo.ShareGroup(cmd.Group), kgo.ConsumeTopics(cmd.Topic), kgo.ShareMaxRecords(int32(maxRecords)),
		kgo.ShareAckCallback(func(_ *kgo.Client, results kgo.ShareAckResults) {
			s.mu.Lock()
			defer s.mu.Unlock()
			for _, r := range results {
				if r.Err != nil {
					s.failed = append(s.failed, fmt.Sprintf("%s-%d: %v", r.Topic, r.Partition, r.Err))
				}
			}
		}))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.client, s.stop = cl, cancel
	d.share = s
	go s.loop(ctx)
	return nil
}

func (s *shareConsumer) holding() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.held) > 0
}

func (s *shareConsumer) loop(ctx context.Context) {
	defer close(s.polling)
	last := ""
	for ctx.Err() == nil {
		if s.holding() {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		fetches := s.client.PollFetches(ctx)
		if fetches.IsClientClosed() {
			return
		}
		emitFetchErrors(fetches, &last)
		fetches.EachRecord(func(r *kgo.Record) {
			s.mu.Lock()
			s.held[fmt.Sprintf("%d:%d", r.Partition, r.Offset)] = r
			s.mu.Unlock()
			emit("share_record", map[string]any{"partition": r.Partition, "offset": r.Offset,
				"delivery_count": r.DeliveryCount(), "key": text(r.Key), "value": text(r.Value)})
		})
	}
}

// shareAck marks each [partition, offset, kind] and flushes the acknowledgements.
func (d *driver) shareAck(cmd command) (map[string]any, error) {
	s := d.share
	if s == nil {
		return nil, errors.New("no share consumer (share_subscribe first)")
	}
	s.mu.Lock()
	s.failed = nil
	for _, a := range cmd.Acks {
		if len(a) != 3 {
			s.mu.Unlock()
			return nil, fmt.Errorf("an ack is [partition, offset, kind], not %v", a)
		}
		partition, pok := a[0].(float64) // JSON numbers
		offset, ook := a[1].(float64)
		if !pok || !ook {
			s.mu.Unlock()
			return nil, fmt.Errorf("an ack's partition and offset are numbers, not %v", a)
		}
		key := fmt.Sprintf("%d:%d", int32(partition), int64(offset))
		r, ok := s.held[key]
		status, known := ackStatuses[fmt.Sprint(a[2])]
		if !ok || !known {
			s.mu.Unlock()
			return nil, fmt.Errorf("record %s is not held, or %v is no acknowledgement type", key, a[2])
		}
		r.Ack(status)
		delete(s.held, key)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.client.FlushAcks(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	errs := map[string]any{}
	for i, f := range s.failed {
		errs[strconv.Itoa(i)] = f
	}
	return map[string]any{"errors": errs}, nil
}

func (s *shareConsumer) close() {
	s.stop()
	<-s.polling
	s.client.Close() // leaves the share group (ShareGroupHeartbeat with epoch -1)
}
