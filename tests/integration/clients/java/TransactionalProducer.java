// A Java transactional producer (kafka-clients, single-file source launch): three transactions
// committed with the group's offsets, three aborted, then a read_committed consumer; prints what it
// read and the producer epoch it ended with (under transaction.version 2 every EndTxn bumps it).
// Args: bootstrap, transactional id, topic, group.
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

public class TransactionalProducer {
  public static void main(String[] args) {
    String bootstrap = args[0], transactionalId = args[1], topic = args[2], group = args[3];
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrap);
    p.put("transactional.id", transactionalId);
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      producer.initTransactions();
      for (int i = 0; i < 3; i++) {
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(topic, "k", "commit-" + i));
        producer.sendOffsetsToTransaction(
            Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(i + 1)), new ConsumerGroupMetadata(group));
        producer.commitTransaction();
        producer.beginTransaction();
        producer.send(new ProducerRecord<>(topic, "k", "abort-" + i));
        producer.flush();
        producer.abortTransaction();
      }
    }
    Properties c = new Properties();
    c.put("bootstrap.servers", bootstrap);
    c.put("group.id", group + "-reader");
    c.put("isolation.level", "read_committed");
    c.put("auto.offset.reset", "earliest");
    c.put("key.deserializer", StringDeserializer.class.getName());
    c.put("value.deserializer", StringDeserializer.class.getName());
    List<String> seen = new ArrayList<>();
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c)) {
      consumer.subscribe(List.of(topic));
      long end = System.currentTimeMillis() + 30000;
      while (seen.size() < 3 && System.currentTimeMillis() < end) {
        for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
          seen.add(r.value());
        }
      }
    }
    System.out.println("READ " + String.join(",", seen));
  }
}
