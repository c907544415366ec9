// The conformance driver for the Apache Kafka Java client (kafka-clients, the version of the Kafka
// broker the suite starts), speaking the JSON-lines protocol of docs/conformance.md: commands on
// stdin, events on stdout, the client's own log on stderr.
//
// Usage: java -cp CLASSES:LIBS/* mockbroker.conformance.Driver --bootstrap HOST:PORT[,...]
//            --client-id ID [--group-protocol classic|consumer] [--config KEY=VALUE ...]
//
// --config adds a client setting (Java's names: security.protocol, sasl.jaas.config, ...) to every
// producer, consumer and admin client: the security tests log in with it.
//
// group.protocol=classic takes the subscribe command's assignor (range: eager; cooperative-sticky:
// KIP-429); group.protocol=consumer is KIP-848 (the broker assigns: no client assignor, session
// timeout or heartbeat interval, which the Java client refuses with that protocol). KafkaConsumer
// is not thread-safe, so one thread does everything: it takes the next command when one is
// queued, else polls the consumer for 100 ms.
package mockbroker.conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.utils.AppInfoParser;

public final class Driver {
    static final int PROTOCOL_VERSION = 1;
    static final Object END = new Object();
    private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    private final String bootstrap;
    private final String clientId;
    private final String groupProtocol;
    private final Map<String, KafkaProducer<byte[], byte[]>> producers = new HashMap<>();
    private KafkaConsumer<byte[], byte[]> consumer;
    private String topic = "";
    private final TreeSet<Integer> assignment = new TreeSet<>();
    private final Map<Integer, Long> consumed = new HashMap<>(); // partition -> next offset
    private String lastError = "";
    private final AdminOps adminOps;
    private final ShareCommands share; // KIP-932: share_subscribe, share_ack, the share admin ops
    // The client's own settings given as --config KEY=VALUE (security.protocol, sasl.mechanism,
    // sasl.jaas.config, ssl.truststore.*, ssl.keystore.*): added to every producer, consumer and admin.
    static final Properties EXTRA = new Properties();

    Driver(String bootstrap, String clientId, String groupProtocol) {
        this.bootstrap = bootstrap;
        this.clientId = clientId;
        this.groupProtocol = groupProtocol;
        this.adminOps = new AdminOps(bootstrap, clientId + "-admin");
        this.share = new ShareCommands(bootstrap, clientId);
    }

    static synchronized void emit(String event, Map<String, Object> fields) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("event", event);
        if (fields != null) {
            line.putAll(fields);
        }
        OUT.println(Json.write(line));
        OUT.flush();
    }

    static Map<String, Object> fields(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static Map<String, Object> errorFields(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && (cause instanceof java.util.concurrent.ExecutionException
                || cause instanceof org.apache.kafka.common.KafkaException && cause.getMessage() == null)) {
            cause = cause.getCause();
        }
        return fields("error", cause.getClass().getSimpleName(), "message", String.valueOf(cause.getMessage()));
    }

    // -- produce ----------------------------------------------------------------------------------

    private KafkaProducer<byte[], byte[]> producer(String compression, boolean idempotent) {
        return producers.computeIfAbsent(compression + "/" + idempotent, k -> {
            Properties p = new Properties();
            p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ProducerConfig.CLIENT_ID_CONFIG, clientId);
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
            // Idempotence is the Java producer's default since Kafka 3.0 (KIP-679): say which.
            p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, String.valueOf(idempotent));
            p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
            p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "50");
            p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000");
            p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "25000");
            p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
            p.putAll(EXTRA);
            return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
        });
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> produce(Map<String, Object> cmd) throws Exception {
        String compression = cmd.get("compression") == null ? "none" : (String) cmd.get("compression");
        KafkaProducer<byte[], byte[]> producer = producer(compression, Boolean.TRUE.equals(cmd.get("idempotent")));
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        for (Object o : (List<Object>) cmd.get("records")) {
            Map<String, Object> r = (Map<String, Object>) o;
            Integer partition = r.get("partition") == null ? null : ((Number) r.get("partition")).intValue();
            futures.add(producer.send(new ProducerRecord<>((String) cmd.get("topic"), partition,
                    bytes(r.get("key")), bytes(r.get("value")))));
        }
        producer.flush();
        List<Object> offsets = new ArrayList<>();
        for (Future<RecordMetadata> f : futures) {
            RecordMetadata m = f.get(30, TimeUnit.SECONDS);
            offsets.add(List.of(m.partition(), m.hasOffset() ? m.offset() : -1L));
        }
        return fields("offsets", offsets);
    }

    static byte[] bytes(Object s) {
        return s == null ? null : ((String) s).getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] b) {
        return b == null ? null : new String(b, StandardCharsets.UTF_8);
    }

    // -- consume ----------------------------------------------------------------------------------

    private Properties consumerConfig(String group, Map<String, Object> cmd) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.RETRY_BACKOFF_MS_CONFIG, "50");
        p.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "2000");
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        p.putAll(EXTRA);
        if (group == null) {
            return p;
        }
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, groupProtocol);
        if (cmd.get("instance_id") != null) {
            p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, cmd.get("instance_id"));
        }
        if (groupProtocol.equals("classic")) {
            p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, String.valueOf(number(cmd, "session_timeout_ms", 10000)));
            p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, String.valueOf(number(cmd, "heartbeat_interval_ms", 300)));
            p.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, "30000");
            String assignor = cmd.get("assignor") == null ? "range" : (String) cmd.get("assignor");
            Class<?> strategy = switch (assignor) {
                case "cooperative-sticky" -> CooperativeStickyAssignor.class;
                case "roundrobin" -> RoundRobinAssignor.class;
                default -> RangeAssignor.class;
            };
            p.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, strategy.getName());
        }
        return p;
    }

    static long number(Map<String, Object> cmd, String key, long otherwise) {
        Object v = cmd.get(key);
        return v == null ? otherwise : ((Number) v).longValue();
    }

    private Map<String, Object> member() {
        try {
            return fields("member_id", consumer.groupMetadata().memberId(), "generation", consumer.groupMetadata().generationId());
        } catch (RuntimeException e) {
            return fields();
        }
    }

    private void subscribe(Map<String, Object> cmd) {
        topic = (String) cmd.get("topic");
        consumer = new KafkaConsumer<>(consumerConfig((String) cmd.get("group"), cmd), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                removed("revoked", partitions);
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                TreeSet<Integer> added = new TreeSet<>();
                partitions.forEach(tp -> added.add(tp.partition()));
                assignment.addAll(added);
                Map<String, Object> f = fields("added", new ArrayList<>(added), "partitions", new ArrayList<>(assignment));
                f.putAll(member());
                emit("assigned", f);
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                removed("lost", partitions);
            }
        });
    }

    private void removed(String event, Collection<TopicPartition> partitions) {
        TreeSet<Integer> removed = new TreeSet<>();
        partitions.forEach(tp -> removed.add(tp.partition()));
        assignment.removeAll(removed);
        Map<String, Object> f = fields("removed", new ArrayList<>(removed), "partitions", new ArrayList<>(assignment));
        f.putAll(member());
        emit(event, f);
    }

    @SuppressWarnings("unchecked")
    private void assign(Map<String, Object> cmd) {
        topic = (String) cmd.get("topic");
        consumer = new KafkaConsumer<>(consumerConfig(null, cmd), new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> tps = new ArrayList<>();
        for (Object p : (List<Object>) cmd.get("partitions")) {
            tps.add(new TopicPartition(topic, ((Number) p).intValue()));
            assignment.add(((Number) p).intValue());
        }
        consumer.assign(tps);
        consumer.seekToBeginning(tps);
    }

    private void poll() throws InterruptedException {
        if (share.active()) {
            share.poll();
            return;
        }
        if (consumer == null) {
            Thread.sleep(50);
            return;
        }
        try {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                consumed.put(r.partition(), r.offset() + 1);
                emit("record", fields("partition", r.partition(), "offset", r.offset(), "key", text(r.key()), "value", text(r.value())));
            }
            lastError = "";
        } catch (RuntimeException e) { // report once per distinct error, then back off
            String what = e.toString();
            if (!what.equals(lastError)) {
                lastError = what;
                emit("client_error", errorFields(e));
            }
            Thread.sleep(100);
        }
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> commit(Map<String, Object> cmd) {
        Map<Integer, Long> offsets = new TreeMap<>();
        Map<String, Object> given = (Map<String, Object>) cmd.get("offsets");
        if (given != null && !given.isEmpty()) {
            given.forEach((p, o) -> offsets.put(Integer.parseInt(p), ((Number) o).longValue()));
        } else {
            consumed.forEach((p, o) -> {
                if (assignment.contains(p)) {
                    offsets.put(p, o);
                }
            });
        }
        Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
        offsets.forEach((p, o) -> commit.put(new TopicPartition(topic, p), new OffsetAndMetadata(o)));
        consumer.commitSync(commit, Duration.ofSeconds(20));
        Map<String, Object> answer = new LinkedHashMap<>();
        offsets.forEach((p, o) -> answer.put(String.valueOf(p), o));
        return fields("offsets", answer);
    }

    @SuppressWarnings("unchecked")
    private List<TopicPartition> partitions(Map<String, Object> cmd) {
        List<TopicPartition> tps = new ArrayList<>();
        for (Object p : (List<Object>) cmd.get("partitions")) {
            tps.add(new TopicPartition(topic, ((Number) p).intValue()));
        }
        return tps;
    }

    private void close() {
        if (consumer != null) {
            consumer.close(); // a dynamic member leaves its group; a static one stays (KIP-345)
        }
        producers.values().forEach(p -> p.close(Duration.ofSeconds(5)));
        adminOps.close();
        share.close();
    }

    /** One command; false when it was close. */
    private boolean handle(Map<String, Object> cmd) {
        String name = String.valueOf(cmd.get("cmd"));
        try {
            switch (name) {
                case "close" -> {
                    close();
                    emit("closed", null);
                    return false;
                }
                case "produce" -> emit("produced", produce(cmd));
                case "subscribe" -> {
                    subscribe(cmd);
                    emit("subscribed", null);
                }
                case "assign" -> {
                    assign(cmd);
                    emit("assigned", fields("added", new ArrayList<>(assignment), "partitions", new ArrayList<>(assignment)));
                }
                case "commit" -> emit("committed", commit(cmd));
                case "admin" -> emit("admin", ShareCommands.adminOps().contains(cmd.get("op")) ? share.admin(cmd) : adminOps.run(cmd));
                case "share_subscribe" -> {
                    share.subscribe(cmd);
                    emit("subscribed", null);
                }
                case "share_ack" -> emit("share_acked", share.ack(cmd));
                case "seek" -> {
                    consumer.seek(new TopicPartition(topic, ((Number) cmd.get("partition")).intValue()), ((Number) cmd.get("offset")).longValue());
                    emit("done", fields("cmd", name));
                }
                case "pause" -> {
                    consumer.pause(partitions(cmd));
                    emit("done", fields("cmd", name));
                }
                case "resume" -> {
                    consumer.resume(partitions(cmd));
                    emit("done", fields("cmd", name));
                }
                default -> emit("unsupported", fields("cmd", name, "reason", "unknown command " + name));
            }
        } catch (Exception e) {
            emit(name + "_failed", errorFields(e));
        }
        return true;
    }

    @SuppressWarnings("unchecked")
    private int serve() throws InterruptedException {
        BlockingQueue<Object> commands = new LinkedBlockingQueue<>();
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.isBlank()) {
                        continue;
                    }
                    try {
                        commands.put(Json.parse(line));
                    } catch (IllegalArgumentException e) {
                        emit("protocol_error", fields("message", e.getMessage(), "line", line));
                    }
                }
            } catch (Exception e) {
                emit("protocol_error", fields("message", "reading stdin: " + e));
            }
            commands.add(END); // end of input: close
        }, "stdin");
        reader.setDaemon(true);
        reader.start();
        Map<String, Object> unsupported = new LinkedHashMap<>();
        emit("hello", fields("protocol", PROTOCOL_VERSION, "client", "kafka-clients (group.protocol=" + groupProtocol + ")",
                "version", AppInfoParser.getVersion(), "unsupported", unsupported, "share", true,
                "admin_ops", new ArrayList<>(adminOpNames())));
        while (true) {
            Object next = commands.poll();
            if (next == null) {
                poll();
                continue;
            }
            Map<String, Object> cmd = next == END ? fields("cmd", "close") : (Map<String, Object>) next;
            if (!handle(cmd)) {
                return 0;
            }
        }
    }

    static List<String> adminOpNames() {
        List<String> ops = new ArrayList<>(AdminOps.ops());
        ops.addAll(ShareCommands.adminOps());
        return ops;
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = null;
        String clientId = null;
        String groupProtocol = "classic";
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--bootstrap" -> bootstrap = args[i + 1];
                case "--client-id" -> clientId = args[i + 1];
                case "--group-protocol" -> groupProtocol = args[i + 1];
                case "--config" -> {
                    String[] kv = args[i + 1].split("=", 2);
                    EXTRA.put(kv[0], kv.length > 1 ? kv[1] : "");
                }
                default -> {
                    System.err.println("unknown option " + args[i]);
                    System.exit(2);
                }
            }
        }
        if (bootstrap == null || clientId == null || !(groupProtocol.equals("classic") || groupProtocol.equals("consumer"))) {
            System.err.println("usage: Driver --bootstrap HOST:PORT --client-id ID [--group-protocol classic|consumer]");
            System.exit(2);
        }
        System.exit(new Driver(bootstrap, clientId, groupProtocol).serve());
    }
}
