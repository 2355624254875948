#include "barrage/common/record_codec.h"

#include <cstdint>
#include <string>
#include <vector>

#include "barrage/common/arrival.h"
#include "barrage/v1/agent.pb.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "gtest/gtest.h"

namespace barrage::common {
namespace {

void ExpectSameRecord(const RequestRecord& a, const RequestRecord& b, size_t i) {
  EXPECT_EQ(a.arrival_index, b.arrival_index) << "record " << i;
  EXPECT_EQ(a.scheduled, b.scheduled) << "record " << i;
  EXPECT_EQ(a.start, b.start) << "record " << i;
  EXPECT_EQ(a.ttfb, b.ttfb) << "record " << i;
  EXPECT_EQ(a.end, b.end) << "record " << i;
  EXPECT_EQ(a.bytes_in, b.bytes_in) << "record " << i;
  EXPECT_EQ(a.bytes_out, b.bytes_out) << "record " << i;
  EXPECT_EQ(a.phases.dns, b.phases.dns) << "record " << i;
  EXPECT_EQ(a.phases.connect, b.phases.connect) << "record " << i;
  EXPECT_EQ(a.phases.tls, b.phases.tls) << "record " << i;
  EXPECT_EQ(a.phases.send, b.phases.send) << "record " << i;
  EXPECT_EQ(a.phases.wait, b.phases.wait) << "record " << i;
  EXPECT_EQ(a.phases.receive, b.phases.receive) << "record " << i;
  EXPECT_EQ(a.status, b.status) << "record " << i;
  EXPECT_EQ(a.error, b.error) << "record " << i;
}

// Records as an agent completes them: schedule order shuffled, some errors, some without a
// first byte, some whose first byte came at the send instant.
std::vector<RequestRecord> RandomRecords(size_t count, uint64_t seed) {
  Rng rng(seed);
  std::vector<RequestRecord> records;
  for (size_t i = 0; i < count; ++i) {
    RequestRecord record;
    // Completion order is not schedule order: jitter the index and its instant backwards too.
    const uint64_t jitter = rng.NextU64() % 50;
    record.arrival_index = i + 100 > jitter ? i + 100 - jitter : 0;
    record.scheduled = static_cast<Nanos>(record.arrival_index) * 1'000'000 +
                       static_cast<Nanos>(rng.NextU64() % 900'000);
    record.start = record.scheduled + static_cast<Nanos>(rng.NextU64() % 5'000'000);
    record.end = record.start + static_cast<Nanos>(rng.NextU64() % 2'000'000'000);
    switch (rng.NextU64() % 4) {
      case 0:
        record.ttfb = 0;  // no byte arrived
        break;
      case 1:
        record.ttfb = record.start;  // first byte at the send instant
        break;
      default:
        record.ttfb =
            record.start + static_cast<Nanos>(rng.NextU64() %
                                              static_cast<uint64_t>(record.end - record.start + 1));
    }
    record.bytes_in = rng.NextU64() % 10'000'000;
    record.bytes_out = rng.NextU64() % 100'000;
    record.phases.dns = static_cast<Nanos>(rng.NextU64() % 1'000'000);
    record.phases.connect = static_cast<Nanos>(rng.NextU64() % 1'000'000);
    record.phases.tls = static_cast<Nanos>(rng.NextU64() % 3'000'000);
    record.phases.send = static_cast<Nanos>(rng.NextU64() % 100'000);
    record.phases.wait = static_cast<Nanos>(rng.NextU64() % 1'000'000'000);
    record.phases.receive = static_cast<Nanos>(rng.NextU64() % 1'000'000);
    record.error = static_cast<ErrorClass>(rng.NextU64() % kErrorClassCount);
    record.status =
        record.error == ErrorClass::kConnect ? 0 : static_cast<uint16_t>(rng.NextU64() % 1000);
    records.push_back(record);
  }
  return records;
}

TEST(RecordCodecTest, RoundTripPreservesEveryField) {
  const std::vector<RequestRecord> records = RandomRecords(5'000, 1);
  // The generator must cover the cases this test is about.
  int backwards = 0;
  int first_byte_at_start = 0;
  int no_byte = 0;
  int errors = 0;
  for (size_t i = 1; i < records.size(); ++i) {
    backwards += records[i].scheduled < records[i - 1].scheduled ? 1 : 0;
    first_byte_at_start += records[i].ttfb == records[i].start ? 1 : 0;
    no_byte += records[i].ttfb == 0 ? 1 : 0;
    errors += records[i].ok() ? 0 : 1;
  }
  ASSERT_GT(backwards, 100);
  ASSERT_GT(first_byte_at_start, 100);
  ASSERT_GT(no_byte, 100);
  ASSERT_GT(errors, 100);

  v1::RecordBatch batch;
  EncodeRecordBatch(records, &batch);
  EXPECT_EQ(batch.scheduled_delta_ns_size(), static_cast<int>(records.size()));
  v1::RecordBatch parsed;
  ASSERT_TRUE(parsed.ParseFromString(batch.SerializeAsString()));
  std::vector<RequestRecord> decoded;
  ASSERT_TRUE(DecodeRecordBatch(parsed, &decoded).ok());
  ASSERT_EQ(decoded.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    ExpectSameRecord(decoded[i], records[i], i);
  }
}

TEST(RecordCodecTest, ExtremeButValidRecords) {
  std::vector<RequestRecord> records(4);
  records[0].scheduled = 5'000'000'000'000;  // far out, then far back
  records[0].start = records[0].scheduled;
  records[0].end = records[0].start;
  records[0].arrival_index = 1'000'000'000;
  records[1].scheduled = 0;
  records[1].start = 1;
  records[1].ttfb = 1;
  records[1].end = 1;
  records[1].error = ErrorClass::kCancelled;
  records[2].arrival_index = UINT64_MAX;
  records[2].scheduled = 7;
  records[2].start = 7;
  records[2].end = 7 + 3'600 * kNanosPerSecond;
  records[2].ttfb = records[2].end;
  records[2].status = 999;
  records[2].error = ErrorClass::kHttp5xx;
  records[2].bytes_in = UINT64_MAX;
  records[3].arrival_index = 0;
  records[3].scheduled = -1'000;  // negative instants survive too
  records[3].start = -500;
  records[3].end = 10;
  v1::RecordBatch batch;
  EncodeRecordBatch(records, &batch);
  std::vector<RequestRecord> decoded;
  ASSERT_TRUE(DecodeRecordBatch(batch, &decoded).ok());
  ASSERT_EQ(decoded.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    ExpectSameRecord(decoded[i], records[i], i);
  }
}

TEST(RecordCodecTest, EncodeClearsTheBatchFirst) {
  const std::vector<RequestRecord> first = RandomRecords(300, 2);
  const std::vector<RequestRecord> second = RandomRecords(100, 3);
  v1::RecordBatch batch;
  EncodeRecordBatch(first, &batch);
  EncodeRecordBatch(second, &batch);
  std::vector<RequestRecord> decoded;
  ASSERT_TRUE(DecodeRecordBatch(batch, &decoded).ok());
  ASSERT_EQ(decoded.size(), second.size());
  for (size_t i = 0; i < second.size(); ++i) {
    ExpectSameRecord(decoded[i], second[i], i);
  }
  EncodeRecordBatch({}, &batch);
  EXPECT_EQ(batch.ByteSizeLong(), 0u);
}

TEST(RecordCodecTest, DecodeAppends) {
  const std::vector<RequestRecord> first = RandomRecords(200, 4);
  const std::vector<RequestRecord> second = RandomRecords(150, 5);
  v1::RecordBatch batch;
  std::vector<RequestRecord> decoded;
  EncodeRecordBatch(first, &batch);
  ASSERT_TRUE(DecodeRecordBatch(batch, &decoded).ok());
  EncodeRecordBatch(second, &batch);
  ASSERT_TRUE(DecodeRecordBatch(batch, &decoded).ok());
  ASSERT_EQ(decoded.size(), first.size() + second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    ExpectSameRecord(decoded[i], first[i], i);
  }
  for (size_t i = 0; i < second.size(); ++i) {
    ExpectSameRecord(decoded[first.size() + i], second[i], first.size() + i);
  }
  // An empty batch appends nothing.
  ASSERT_TRUE(DecodeRecordBatch(v1::RecordBatch(), &decoded).ok());
  EXPECT_EQ(decoded.size(), first.size() + second.size());
}

TEST(RecordCodecTest, RefusesBatchWithAnyColumnShorter) {
  v1::RecordBatch good;
  EncodeRecordBatch(RandomRecords(20, 6), &good);
  const google::protobuf::Descriptor* descriptor = good.GetDescriptor();
  const google::protobuf::Reflection* reflection = good.GetReflection();
  ASSERT_EQ(descriptor->field_count(), 15);
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(f);
    ASSERT_TRUE(field->is_repeated()) << field->name();
    v1::RecordBatch bad = good;
    reflection->RemoveLast(&bad, field);
    std::vector<RequestRecord> decoded;
    const absl::Status status = DecodeRecordBatch(bad, &decoded);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << field->name();
    EXPECT_TRUE(decoded.empty()) << field->name();
  }
}

TEST(RecordCodecTest, RefusesOutOfRangeValues) {
  const std::vector<RequestRecord> records = RandomRecords(20, 7);
  v1::RecordBatch good;
  EncodeRecordBatch(records, &good);

  v1::RecordBatch unknown_error = good;
  unknown_error.mutable_error()->Set(10, 99);
  v1::RecordBatch negative_error = good;
  negative_error.mutable_error()->Set(0, -1);
  v1::RecordBatch big_status = good;
  big_status.set_status(19, 5'000);
  v1::RecordBatch huge_duration = good;
  huge_duration.set_duration_ns(3, UINT64_MAX);
  for (const v1::RecordBatch* bad :
       {&unknown_error, &negative_error, &big_status, &huge_duration}) {
    v1::RecordBatch parsed;
    ASSERT_TRUE(parsed.ParseFromString(bad->SerializeAsString()));
    std::vector<RequestRecord> decoded;
    const absl::Status status = DecodeRecordBatch(parsed, &decoded);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
    EXPECT_FALSE(status.message().empty());
  }

  // All or nothing: a refused batch leaves what was decoded before untouched.
  std::vector<RequestRecord> kept(3);
  EXPECT_FALSE(DecodeRecordBatch(unknown_error, &kept).ok());
  EXPECT_EQ(kept.size(), 3u);

  // Instants that would overflow a signed 64-bit count of nanoseconds.
  v1::RecordBatch overflowing = good;
  overflowing.set_scheduled_delta_ns(0, INT64_MAX);
  overflowing.set_scheduled_delta_ns(1, INT64_MAX);
  std::vector<RequestRecord> none;
  EXPECT_EQ(DecodeRecordBatch(overflowing, &none).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(none.empty());

  // A status of 5000 recorded by a buggy engine is refused on the way back, not truncated.
  std::vector<RequestRecord> bad_status = records;
  bad_status[0].status = 5'000;
  v1::RecordBatch batch;
  EncodeRecordBatch(bad_status, &batch);
  std::vector<RequestRecord> decoded;
  EXPECT_EQ(DecodeRecordBatch(batch, &decoded).code(), absl::StatusCode::kInvalidArgument);
}

TEST(RecordCodecTest, GarbageBytesNeverCrash) {
  v1::RecordBatch good;
  EncodeRecordBatch(RandomRecords(50, 8), &good);
  std::string wire = good.SerializeAsString();
  Rng rng(9);
  int refused = 0;
  for (int trial = 0; trial < 2'000; ++trial) {
    std::string mutated = wire;
    for (int flips = 0; flips < 3; ++flips) {
      mutated[rng.NextU64() % mutated.size()] = static_cast<char>(rng.NextU64());
    }
    v1::RecordBatch parsed;
    if (!parsed.ParseFromString(mutated)) {
      continue;
    }
    std::vector<RequestRecord> decoded;
    const absl::Status status = DecodeRecordBatch(parsed, &decoded);
    if (!status.ok()) {
      ++refused;
      EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    }
  }
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace barrage::common
