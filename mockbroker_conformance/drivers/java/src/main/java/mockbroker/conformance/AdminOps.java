// The Java driver's AdminClient operations (the "admin" command of docs/conformance.md): topics
// (create, describe, delete), topic configs (describe, incremental alter), consumer groups (list,
// describe, delete) and offsets (list a partition's, list/alter/delete a group's). One Admin client,
// created on first use. Each operation answers with what it saw; an error of one topic or group
// (TopicExistsException, GroupNotEmptyException, ...) is reported under "errors" by its simple
// class name, as the other drivers' events name errors, while a failure of the whole call throws.
package mockbroker.conformance;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;

final class AdminOps implements AutoCloseable {
    private static final long TIMEOUT_S = 30;
    private final String bootstrap;
    private final String clientId;
    private Admin admin;

    AdminOps(String bootstrap, String clientId) {
        this.bootstrap = bootstrap;
        this.clientId = clientId;
    }

    private Admin admin() {
        if (admin == null) {
            Properties p = new Properties();
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(AdminClientConfig.CLIENT_ID_CONFIG, clientId);
            p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TimeUnit.SECONDS.toMillis(TIMEOUT_S));
            admin = Admin.create(p);
        }
        return admin;
    }

    @Override
    public void close() {
        if (admin != null) {
            admin.close(Duration.ofSeconds(5));
        }
    }

    @SuppressWarnings("unchecked")
    private static List<String> strings(Map<String, Object> cmd, String key) {
        List<String> out = new ArrayList<>();
        for (Object o : (List<Object>) cmd.getOrDefault(key, List.of())) {
            out.add(String.valueOf(o));
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static List<Integer> ints(Map<String, Object> cmd, String key) {
        List<Integer> out = new ArrayList<>();
        for (Object o : (List<Object>) cmd.get(key)) {
            out.add(((Number) o).intValue());
        }
        return out;
    }

    private static <T> T get(KafkaFuture<T> f) throws InterruptedException, ExecutionException, java.util.concurrent.TimeoutException {
        return f.get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    /** Waits for each key's future; the failed ones go to errors (by the cause's simple class name). */
    private static <K, V> Map<String, V> each(Map<K, KafkaFuture<V>> futures, Map<String, Object> errors) throws InterruptedException {
        Map<String, V> ok = new TreeMap<>();
        for (Map.Entry<K, KafkaFuture<V>> e : futures.entrySet()) {
            try {
                ok.put(String.valueOf(e.getKey()), get(e.getValue()));
            } catch (ExecutionException | java.util.concurrent.TimeoutException ex) {
                errors.put(String.valueOf(e.getKey()), Driver.errorFields(ex).get("error"));
            }
        }
        return ok;
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> run(Map<String, Object> cmd) throws Exception {
        String op = String.valueOf(cmd.get("op"));
        Map<String, Object> errors = new TreeMap<>();
        Map<String, Object> out = Driver.fields("op", op);
        switch (op) {
            case "create_topics" -> {
                List<NewTopic> topics = new ArrayList<>();
                for (String name : strings(cmd, "topics")) {
                    topics.add(new NewTopic(name, ((Number) cmd.getOrDefault("partitions", 1)).intValue(), (short) 1));
                }
                out.put("created", new ArrayList<>(each(admin().createTopics(topics).values(), errors).keySet()));
            }
            case "describe_topics" -> {
                Map<String, TopicDescription> found = each(admin().describeTopics(strings(cmd, "topics")).topicNameValues(), errors);
                Map<String, Object> partitions = new TreeMap<>();
                found.forEach((name, d) -> partitions.put(name, d.partitions().size()));
                out.put("partitions", partitions);
            }
            case "delete_topics" -> out.put("deleted", new ArrayList<>(each(admin().deleteTopics(strings(cmd, "topics")).topicNameValues(), errors).keySet()));
            case "describe_configs" -> {
                ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, String.valueOf(cmd.get("topic")));
                Config config = get(admin().describeConfigs(List.of(topic)).all()).get(topic);
                Map<String, Object> values = new TreeMap<>();
                for (String name : strings(cmd, "names")) {
                    ConfigEntry entry = config.get(name);
                    values.put(name, entry == null ? null : Driver.fields("value", entry.value(), "source", entry.source().name()));
                }
                out.put("configs", values);
            }
            case "alter_configs" -> {
                ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, String.valueOf(cmd.get("topic")));
                List<AlterConfigOp> ops = new ArrayList<>();
                ((Map<String, Object>) cmd.get("set")).forEach((k, v) ->
                        ops.add(new AlterConfigOp(new ConfigEntry(k, String.valueOf(v)), AlterConfigOp.OpType.SET)));
                for (String k : strings(cmd, "delete")) {
                    ops.add(new AlterConfigOp(new ConfigEntry(k, null), AlterConfigOp.OpType.DELETE));
                }
                out.put("altered", new ArrayList<>(each(admin().incrementalAlterConfigs(Map.of(topic, ops)).values(), errors).keySet()));
            }
            case "list_groups" -> {
                List<String> ids = new ArrayList<>();
                for (GroupListing g : get(admin().listGroups().all())) {
                    ids.add(g.groupId());
                }
                ids.sort(null);
                out.put("groups", ids);
            }
            case "describe_groups" -> {
                Map<String, ConsumerGroupDescription> found = each(admin().describeConsumerGroups(strings(cmd, "groups")).describedGroups(), errors);
                Map<String, Object> groups = new TreeMap<>();
                found.forEach((id, d) -> groups.put(id, Driver.fields("state", d.groupState().name(), "members", d.members().size())));
                out.put("groups", groups);
            }
            case "delete_groups" -> out.put("deleted", new ArrayList<>(each(admin().deleteConsumerGroups(strings(cmd, "groups")).deletedGroups(), errors).keySet()));
            case "list_offsets" -> {
                String topic = String.valueOf(cmd.get("topic"));
                OffsetSpec spec = "earliest".equals(cmd.get("spec")) ? OffsetSpec.earliest() : OffsetSpec.latest();
                Map<TopicPartition, OffsetSpec> wanted = new java.util.HashMap<>();
                for (int p : ints(cmd, "partitions")) {
                    wanted.put(new TopicPartition(topic, p), spec);
                }
                Map<String, Object> offsets = new TreeMap<>();
                get(admin().listOffsets(wanted).all()).forEach((tp, info) -> offsets.put(String.valueOf(tp.partition()), info.offset()));
                out.put("offsets", offsets);
            }
            case "group_offsets" -> {
                Map<TopicPartition, OffsetAndMetadata> committed = get(admin().listConsumerGroupOffsets(String.valueOf(cmd.get("group"))).partitionsToOffsetAndMetadata());
                Map<String, Object> offsets = new TreeMap<>();
                committed.forEach((tp, om) -> offsets.put(tp.topic() + ":" + tp.partition(), om == null ? null : om.offset()));
                out.put("offsets", offsets);
            }
            case "alter_offsets" -> {
                String topic = String.valueOf(cmd.get("topic"));
                Map<TopicPartition, OffsetAndMetadata> offsets = new java.util.HashMap<>();
                ((Map<String, Object>) cmd.get("offsets")).forEach((p, o) ->
                        offsets.put(new TopicPartition(topic, Integer.parseInt(p)), new OffsetAndMetadata(((Number) o).longValue())));
                get(admin().alterConsumerGroupOffsets(String.valueOf(cmd.get("group")), offsets).all());
            }
            case "delete_offsets" -> {
                String topic = String.valueOf(cmd.get("topic"));
                java.util.Set<TopicPartition> parts = new java.util.HashSet<>();
                for (int p : ints(cmd, "partitions")) {
                    parts.add(new TopicPartition(topic, p));
                }
                get(admin().deleteConsumerGroupOffsets(String.valueOf(cmd.get("group")), parts).all());
            }
            default -> throw new IllegalArgumentException("unknown admin op " + op);
        }
        out.put("errors", errors);
        return out;
    }

    static Collection<String> ops() {
        return List.of("create_topics", "describe_topics", "delete_topics", "describe_configs", "alter_configs",
                "list_groups", "describe_groups", "delete_groups", "list_offsets", "group_offsets", "alter_offsets", "delete_offsets");
    }
}
