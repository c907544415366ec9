package mockbroker.streams;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.errors.MissingSourceTopicException;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;

/**
 * The conformance suite's Kafka Streams driver (docs/conformance.md, "Kafka Streams"): one process
 * is one instance of the word count ({@link WordCount#topology}), speaking the suite's JSON lines
 * on stdout. Unlike the client drivers it takes its application on the command line:
 *
 * <pre>
 * StreamsDriver --bootstrap HOST:PORT --client-id ID --group-protocol classic|streams
 *               [--application-id ID --input TOPIC --output TOPIC --state-dir DIR [--config KEY=VALUE ...]]
 * </pre>
 *
 * Without --application-id it only says hello (the runner asks every driver its version). With
 * it, the application starts at once; events: {@code hello}, {@code state} (each KafkaStreams
 * state change), {@code tasks} (the instance's active and standby task ids, "subtopology_partition",
 * whenever they change), {@code client_error} (an exception that ended a stream thread: the
 * thread is replaced after a MissingSourceTopicException, so that the application recovers once
 * the topic exists; any other shuts the client down), {@code closed}. The one command is
 * {@code {"cmd": "close"}} (or the end of stdin): a clean close (the member leaves its group).
 */
public final class StreamsDriver {
    private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    private StreamsDriver() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new LinkedHashMap<>();
        Properties extra = new Properties();
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (args[i].equals("--config")) {
                String[] kv = args[i + 1].split("=", 2);
                extra.put(kv[0], kv[1]);
            } else {
                opts.put(args[i].substring(2), args[i + 1]);
            }
        }
        String protocol = opts.getOrDefault("group-protocol", "classic");
        emit("{\"event\": \"hello\", \"protocol\": 1, \"client\": \"kafka-streams\", \"version\": "
            + quote(AppInfoParser.getVersion() + " (group.protocol=" + protocol + ")") + ", \"unsupported\": {}}");
        KafkaStreams streams = null;
        if (opts.containsKey("application-id")) {
            streams = start(opts, protocol, extra);
        }
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.contains("\"close\"")) {
            // the only command is close
        }
        if (streams != null) {
            streams.close(Duration.ofSeconds(20));
        }
        emit("{\"event\": \"closed\"}");
        System.exit(0);
    }

    private static KafkaStreams start(Map<String, String> opts, String protocol, Properties extra) {
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, opts.get("application-id"));
        props.put(StreamsConfig.CLIENT_ID_CONFIG, opts.get("client-id"));
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(StreamsConfig.STATE_DIR_CONFIG, opts.get("state-dir"));
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
        props.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        props.putAll(extra);
        KafkaStreams streams = new KafkaStreams(WordCount.topology(opts.get("input"), opts.get("output")), props);
        streams.setStateListener((now, before) ->
            emit("{\"event\": \"state\", \"state\": " + quote(now.name()) + ", \"before\": " + quote(before.name()) + "}"));
        streams.setUncaughtExceptionHandler(exception -> {
            Throwable cause = exception;
            while (cause.getCause() != null && !(cause instanceof MissingSourceTopicException)) {
                cause = cause.getCause();
            }
            emit("{\"event\": \"client_error\", \"error\": " + quote(cause.getClass().getSimpleName())
                + ", \"message\": " + quote(String.valueOf(cause.getMessage())) + "}");
            return cause instanceof MissingSourceTopicException
                ? StreamThreadExceptionResponse.REPLACE_THREAD : StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        Thread watcher = new Thread(() -> watchTasks(streams), "tasks-watcher");
        watcher.setDaemon(true);
        watcher.start();
        return streams;
    }

    /** A {@code tasks} event whenever the instance's active or standby tasks change (polled every 50 ms). */
    private static void watchTasks(KafkaStreams streams) {
        String last = "";
        while (true) {
            TreeSet<String> active = new TreeSet<>();
            TreeSet<String> standby = new TreeSet<>();
            try {
                for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
                    for (TaskMetadata task : thread.activeTasks()) {
                        active.add(task.taskId().toString());
                    }
                    for (TaskMetadata task : thread.standbyTasks()) {
                        standby.add(task.taskId().toString());
                    }
                }
            } catch (RuntimeException e) {
                // not running (closing, or in error): nothing to report
            }
            String now = "{\"event\": \"tasks\", \"active\": " + list(active) + ", \"standby\": " + list(standby) + "}";
            if (!now.equals(last)) {
                emit(now);
                last = now;
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static String list(TreeSet<String> ids) {
        List<String> quoted = new ArrayList<>();
        for (String id : ids) {
            quoted.add(quote(id));
        }
        return "[" + String.join(", ", quoted) + "]";
    }

    static synchronized void emit(String json) {
        OUT.println(json);
        OUT.flush();
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }
}
