// The Java client's share-group driver (KIP-932): KafkaShareConsumer and the AdminClient's
// share-group offset calls, run as one scripted scenario (not the command protocol of Driver),
// events as JSON lines on stdout.
//
// Usage: java -cp CLASSES:LIBS/* mockbroker.conformance.ShareDriver --bootstrap HOST:PORT
//            --group G --topic T --records N
//
// 1. AlterShareGroupOffsets puts partition 0's share-partition start offset at 0 (the group does
//    not exist yet: the call creates it empty), then ListShareGroupOffsets ("offsets" events).
// 2. Two KafkaShareConsumers (explicit acknowledgement) poll in turns on one thread; after both
//    polled, a "round" event gives what each one holds (acquired, not yet acknowledged), then each
//    acknowledges: offset 0 is RELEASEd the first time it is delivered, every other record
//    ACCEPTed; commitSync. Until N records are accepted or 60 s passed.
// 3. The consumers close; ListShareGroupOffsets (start offsets and lags), AlterShareGroupOffsets
//    back to 0, and ListShareGroupOffsets again.
package mockbroker.conformance;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class ShareDriver {
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

    static void emit(String event, Map<String, Object> fields) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("event", event);
        line.putAll(fields);
        OUT.println(Json.write(line));
    }

    static KafkaShareConsumer<byte[], byte[]> consumer(String bootstrap, String group, String clientId) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        return new KafkaShareConsumer<>(p);
    }

    static void offsets(Admin admin, String group, String step) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> info = admin
            .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
            .partitionsToOffsetInfo(group).get();
        Map<String, Object> starts = new TreeMap<>();
        Map<String, Object> lags = new TreeMap<>();
        info.forEach((tp, i) -> {
            starts.put(tp.topic() + ":" + tp.partition(), i == null ? null : i.startOffset());
            lags.put(tp.topic() + ":" + tp.partition(), i == null ? null : i.lag().orElse(null));
        });
        emit("offsets", Map.of("step", step, "start_offsets", starts, "lags", lags));
    }

    static void alter(Admin admin, String group, String topic, long offset) throws Exception {
        admin.alterShareGroupOffsets(group, Map.of(new TopicPartition(topic, 0), offset)).all().get();
        emit("altered", Map.of("partition", 0, "start_offset", offset));
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new TreeMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            opts.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        String bootstrap = opts.get("bootstrap");
        String group = opts.get("group");
        String topic = opts.get("topic");
        int records = Integer.parseInt(opts.get("records"));
        Properties ap = new Properties();
        ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(ap)) {
            alter(admin, group, topic, 0);
            offsets(admin, group, "before");
            consume(bootstrap, group, topic, records);
            offsets(admin, group, "after");
            alter(admin, group, topic, 0);
            offsets(admin, group, "reset");
        }
        emit("done", Map.of());
    }

    static void consume(String bootstrap, String group, String topic, int records) {
        List<KafkaShareConsumer<byte[], byte[]>> consumers = List.of(
            consumer(bootstrap, group, "share-a"), consumer(bootstrap, group, "share-b"));
        for (KafkaShareConsumer<byte[], byte[]> c : consumers) {
            c.subscribe(List.of(topic));
        }
        TreeSet<Long> accepted = new TreeSet<>();
        boolean released = false;
        long deadline = System.currentTimeMillis() + 60_000;
        while (accepted.size() < records && System.currentTimeMillis() < deadline) {
            List<List<ConsumerRecord<byte[], byte[]>>> held = new ArrayList<>();
            Map<String, Object> round = new LinkedHashMap<>();
            for (int i = 0; i < consumers.size(); i++) {
                List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
                consumers.get(i).poll(Duration.ofMillis(300)).forEach(got::add);
                held.add(got);
                List<List<Object>> seen = new ArrayList<>();
                for (ConsumerRecord<byte[], byte[]> r : got) {
                    seen.add(List.of(r.offset(), (int) r.deliveryCount().orElse((short) -1)));
                }
                round.put(i == 0 ? "a" : "b", seen);
            }
            emit("round", Map.of("held", round));
            for (int i = 0; i < consumers.size(); i++) {
                for (ConsumerRecord<byte[], byte[]> r : held.get(i)) {
                    AcknowledgeType type = AcknowledgeType.ACCEPT;
                    if (r.offset() == 0 && !released) {
                        type = AcknowledgeType.RELEASE;
                        released = true;
                    } else {
                        accepted.add(r.offset());
                    }
                    consumers.get(i).acknowledge(r, type);
                }
                consumers.get(i).commitSync();
            }
        }
        emit("consumed", Map.of("accepted", new ArrayList<>(accepted)));
        for (KafkaShareConsumer<byte[], byte[]> c : consumers) {
            c.close(Duration.ofSeconds(10));
        }
    }
}
