package mockbroker.streams;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A Kafka Streams word count for the streams-group tests (KIP-1071): lines from the input topic are
 * split into words, re-keyed by word (a repartition topic), counted in a state store (a changelog
 * topic) and the counts written to the output topic. One process is one instance of the application.
 *
 * Usage: WordCount BOOTSTRAP APPLICATION_ID GROUP_PROTOCOL PROCESSING_GUARANTEE STATE_DIR INPUT OUTPUT
 *
 * On stdout, one line per change of the KafkaStreams state ("STATE RUNNING"); it runs until stdin
 * closes or SIGTERM, then closes cleanly ("CLOSED").
 */
public final class WordCount {
    private WordCount() {
    }

    /**
     * The word count: lines of {@code input} split into words (lower case, split on \W+), re-keyed
     * by word (the repartition topic "count"), counted in the store "counts" (its changelog) and the
     * counts written to {@code output} (String keys, Long values). Subtopology 0 reads the input,
     * subtopology 1 the repartition topic and holds the state.
     */
    static Topology topology(String input, String output) {
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> lines = builder.stream(input);
        lines.flatMapValues(line -> Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with("count", Serdes.String(), Serdes.String()))
            .count(Materialized.as("counts"))
            .toStream()
            .to(output, Produced.with(Serdes.String(), Serdes.Long()));
        return builder.build();
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: WordCount BOOTSTRAP APPLICATION_ID GROUP_PROTOCOL PROCESSING_GUARANTEE STATE_DIR INPUT OUTPUT");
            System.exit(2);
        }
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, args[2]);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, args[3]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        // A classic-protocol consumer group: rebalance quickly when an instance goes.
        props.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 10000);
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");

        KafkaStreams streams = new KafkaStreams(topology(args[5], args[6]), props);
        CountDownLatch done = new CountDownLatch(1);
        streams.setStateListener((now, before) -> {
            System.out.println("STATE " + now);
            System.out.flush();
        });
        streams.setUncaughtExceptionHandler(exception -> {
            System.err.println("UNCAUGHT " + exception);
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(done::countDown));
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // the test closes stdin to stop the instance
                }
            } catch (java.io.IOException ignored) {
                // closed
            }
            done.countDown();
        });
        stdin.setDaemon(true);
        stdin.start();
        streams.start();
        done.await();
        streams.close(Duration.ofSeconds(20));
        System.out.println("CLOSED");
        System.out.flush();
    }
}
