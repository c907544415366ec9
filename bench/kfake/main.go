// kfake, franz-go's fake Kafka cluster (github.com/twmb/franz-go/pkg/kfake), as a stand-alone
// process: one of the peers bench/run.py compares mockbroker with, beside librdkafka's mock and the
// real Kafka. Built by `make bench-peers` into build/bench-peers/kfake.
//
// It prints `KFAKE READY bootstrap=HOST:PORT[,...]` once the cluster listens (the shape of
// mockbroker's and bench/rdkafka_mock.py's READY lines) and serves until its stdin closes or a
// signal arrives. kfake has no group.initial.rebalance.delay.ms: a classic group's join phase ends
// once every known member has rejoined, so --initial-rebalance-delay-ms is accepted and ignored.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

type topicsFlag []string

func (t *topicsFlag) String() string     { return strings.Join(*t, ",") }
func (t *topicsFlag) Set(s string) error { *t = append(*t, s); return nil }

func main() {
	var topics topicsFlag
	brokers := flag.Int("brokers", 1, "brokers in the cluster")
	flag.Var(&topics, "topic", "NAME:PARTITIONS to create at start (repeatable)")
	flag.Int("initial-rebalance-delay-ms", -1, "accepted for symmetry with the other peers; kfake has no such delay")
	flag.Parse()

	opts := []kfake.Opt{kfake.NumBrokers(*brokers), kfake.AllowAutoTopicCreation()}
	for _, spec := range topics {
		name, parts, _ := strings.Cut(spec, ":")
		n := int64(1)
		if parts != "" {
			var err error
			if n, err = strconv.ParseInt(parts, 10, 32); err != nil {
				fmt.Fprintf(os.Stderr, "bad --topic %q: %v\n", spec, err)
				os.Exit(2)
			}
		}
		opts = append(opts, kfake.SeedTopics(int32(n), name))
	}
	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfake did not start: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("KFAKE READY bootstrap=%s\n", strings.Join(cluster.ListenAddrs(), ","))

	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); done <- struct{}{} }()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() { <-signals; done <- struct{}{} }()
	<-done
	cluster.Close()
}
