// The Java driver's share-group commands (KIP-932, docs/conformance.md): share_subscribe makes a
// KafkaShareConsumer in explicit acknowledgement mode, whose records are emitted as share_record
// events and stay acquired until share_ack acknowledges them (accept, release, reject) and commits
// (commitSync); and the AdminClient's share-group calls as "admin" ops (share_offsets,
// alter_share_offsets, delete_share_offsets, describe_share_groups, delete_share_groups).
//
// In explicit mode KafkaShareConsumer refuses a poll while records of the last one are not
// acknowledged (IllegalStateException), so the driver polls only when it holds none. Like
// KafkaConsumer it is not thread-safe: the driver's one thread calls everything here.
package mockbroker.conformance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

final class ShareCommands implements AutoCloseable {
    private static final long TIMEOUT_S = 30;
    private final String bootstrap;
    private final String clientId;
    private KafkaShareConsumer<byte[], byte[]> consumer;
    private Admin admin;
    // (partition, offset) -> the record delivered and not yet acknowledged
    private final Map<String, ConsumerRecord<byte[], byte[]>> held = new LinkedHashMap<>();
    private String lastError = "";

    ShareCommands(String bootstrap, String clientId) {
        this.bootstrap = bootstrap;
        this.clientId = clientId;
    }

    static List<String> adminOps() {
        return List.of("share_offsets", "alter_share_offsets", "delete_share_offsets", "describe_share_groups", "delete_share_groups");
    }

    boolean active() {
        return consumer != null;
    }

    void subscribe(Map<String, Object> cmd) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, String.valueOf(cmd.get("group")));
        p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, String.valueOf(Driver.number(cmd, "max_records", 500)));
        p.put(ConsumerConfig.RETRY_BACKOFF_MS_CONFIG, "50");
        p.putAll(Driver.EXTRA);
        consumer = new KafkaShareConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        consumer.subscribe(List.of(String.valueOf(cmd.get("topic"))));
    }

    void poll() throws InterruptedException {
        if (!held.isEmpty()) {
            Thread.sleep(50);
            return;
        }
        try {
            for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                held.put(r.partition() + ":" + r.offset(), r);
                Driver.emit("share_record", Driver.fields("partition", r.partition(), "offset", r.offset(),
                        "delivery_count", (int) r.deliveryCount().orElse((short) -1), "key", Driver.text(r.key()), "value", Driver.text(r.value())));
            }
            lastError = "";
        } catch (RuntimeException e) { // report once per distinct error, then back off
            if (!e.toString().equals(lastError)) {
                lastError = e.toString();
                Driver.emit("client_error", Driver.errorFields(e));
            }
            Thread.sleep(100);
        }
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> ack(Map<String, Object> cmd) {
        for (Object o : (List<Object>) cmd.get("acks")) {
            List<Object> a = (List<Object>) o;
            String key = ((Number) a.get(0)).intValue() + ":" + ((Number) a.get(1)).longValue();
            ConsumerRecord<byte[], byte[]> r = held.remove(key);
            if (r == null) {
                throw new IllegalStateException("record " + key + " is not held (not delivered, or acknowledged already)");
            }
            consumer.acknowledge(r, AcknowledgeType.valueOf(String.valueOf(a.get(2)).toUpperCase(java.util.Locale.ROOT)));
        }
        Map<String, Object> errors = new TreeMap<>();
        Map<TopicIdPartition, Optional<KafkaException>> results = consumer.commitSync(Duration.ofSeconds(20));
        results.forEach((tp, e) -> e.ifPresent(ex -> errors.put(String.valueOf(tp.partition()), ex.getClass().getSimpleName())));
        return Driver.fields("errors", errors);
    }

    private Admin admin() {
        if (admin == null) {
            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId + "-share-admin");
            p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TimeUnit.SECONDS.toMillis(TIMEOUT_S));
            p.putAll(Driver.EXTRA);
            admin = Admin.create(p);
        }
        return admin;
    }

    private static <T> T get(KafkaFuture<T> f) throws Exception {
        return f.get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> admin(Map<String, Object> cmd) throws Exception {
        String op = String.valueOf(cmd.get("op"));
        String group = String.valueOf(cmd.get("group"));
        Map<String, Object> errors = new TreeMap<>();
        Map<String, Object> out = Driver.fields("op", op);
        switch (op) {
            case "share_offsets" -> {
                Map<TopicPartition, SharePartitionOffsetInfo> info = get(admin()
                        .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec())).partitionsToOffsetInfo(group));
                Map<String, Object> starts = new TreeMap<>();
                Map<String, Object> lags = new TreeMap<>();
                info.forEach((tp, i) -> {
                    starts.put(tp.topic() + ":" + tp.partition(), i == null ? null : i.startOffset());
                    lags.put(tp.topic() + ":" + tp.partition(), i == null ? null : i.lag().orElse(null));
                });
                out.put("start_offsets", starts);
                out.put("lags", lags);
            }
            case "alter_share_offsets" -> {
                String topic = String.valueOf(cmd.get("topic"));
                Map<TopicPartition, Long> offsets = new java.util.HashMap<>();
                ((Map<String, Object>) cmd.get("offsets")).forEach((p, o) ->
                        offsets.put(new TopicPartition(topic, Integer.parseInt(p)), ((Number) o).longValue()));
                get(admin().alterShareGroupOffsets(group, offsets).all());
            }
            case "delete_share_offsets" -> get(admin().deleteShareGroupOffsets(group, Set.of(String.valueOf(cmd.get("topic")))).all());
            case "describe_share_groups" -> {
                Map<String, Object> groups = new TreeMap<>();
                for (Object g : (List<Object>) cmd.get("groups")) {
                    try {
                        ShareGroupDescription d = get(admin().describeShareGroups(List.of(String.valueOf(g))).describedGroups().get(String.valueOf(g)));
                        groups.put(String.valueOf(g), Driver.fields("state", d.groupState().name(), "members", d.members().size()));
                    } catch (java.util.concurrent.ExecutionException e) {
                        errors.put(String.valueOf(g), Driver.errorFields(e).get("error"));
                    }
                }
                out.put("groups", groups);
            }
            case "delete_share_groups" -> {
                List<String> deleted = new ArrayList<>();
                for (Object g : (List<Object>) cmd.get("groups")) {
                    try {
                        get(admin().deleteShareGroups(List.of(String.valueOf(g))).all());
                        deleted.add(String.valueOf(g));
                    } catch (java.util.concurrent.ExecutionException e) {
                        errors.put(String.valueOf(g), Driver.errorFields(e).get("error"));
                    }
                }
                out.put("deleted", deleted);
            }
            default -> throw new IllegalArgumentException("unknown share admin op " + op);
        }
        out.put("errors", errors);
        return out;
    }

    @Override
    public void close() {
        if (consumer != null) {
            consumer.close(Duration.ofSeconds(10));
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
    }
}
