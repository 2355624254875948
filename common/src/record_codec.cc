#include "barrage/common/record_codec.h"

#include <limits>

#include "barrage/v1/agent.pb.h"

namespace barrage::common {
namespace {

uint64_t NonNegative(Nanos value) { return value > 0 ? static_cast<uint64_t>(value) : 0; }

bool FitsNanos(uint64_t value) {
  return value <= static_cast<uint64_t>(std::numeric_limits<Nanos>::max());
}

}  // namespace

void EncodeRecordBatch(std::span<const RequestRecord> records, v1::RecordBatch* out) {
  out->Clear();  // keeps the repeated fields' capacity
  const int n = static_cast<int>(records.size());
  out->mutable_scheduled_delta_ns()->Reserve(n);
  out->mutable_arrival_index_delta()->Reserve(n);
  for (auto* column : {out->mutable_queue_ns(), out->mutable_ttfb_ns(), out->mutable_duration_ns(),
                       out->mutable_bytes_in(), out->mutable_bytes_out(), out->mutable_dns_ns(),
                       out->mutable_connect_ns(), out->mutable_tls_ns(), out->mutable_send_ns(),
                       out->mutable_wait_ns(), out->mutable_receive_ns()}) {
    column->Reserve(n);
  }
  out->mutable_status()->Reserve(n);
  out->mutable_error()->Reserve(n);
  Nanos previous_scheduled = 0;
  uint64_t previous_index = 0;
  for (const RequestRecord& record : records) {
    // Scheduled instants and arrival indices rise almost monotonically: deltas stay small and
    // zig-zag varints stay short. Everything else is relative to the send instant.
    out->add_scheduled_delta_ns(record.scheduled - previous_scheduled);
    previous_scheduled = record.scheduled;
    out->add_arrival_index_delta(static_cast<int64_t>(record.arrival_index - previous_index));
    previous_index = record.arrival_index;
    out->add_queue_ns(NonNegative(record.start - record.scheduled));
    out->add_ttfb_ns(record.ttfb > 0 ? NonNegative(record.ttfb - record.start) + 1 : 0);
    out->add_duration_ns(NonNegative(record.end - record.start));
    out->add_status(record.status);
    out->add_error(static_cast<v1::ErrorClass>(record.error));
    out->add_bytes_in(record.bytes_in);
    out->add_bytes_out(record.bytes_out);
    out->add_dns_ns(NonNegative(record.phases.dns));
    out->add_connect_ns(NonNegative(record.phases.connect));
    out->add_tls_ns(NonNegative(record.phases.tls));
    out->add_send_ns(NonNegative(record.phases.send));
    out->add_wait_ns(NonNegative(record.phases.wait));
    out->add_receive_ns(NonNegative(record.phases.receive));
  }
}

absl::Status DecodeRecordBatch(const v1::RecordBatch& batch, std::vector<RequestRecord>* out) {
  const int n = batch.scheduled_delta_ns_size();
  const int lengths[] = {batch.queue_ns_size(),    batch.ttfb_ns_size(),
                         batch.duration_ns_size(), batch.status_size(),
                         batch.error_size(),       batch.bytes_in_size(),
                         batch.bytes_out_size(),   batch.dns_ns_size(),
                         batch.connect_ns_size(),  batch.tls_ns_size(),
                         batch.send_ns_size(),     batch.wait_ns_size(),
                         batch.receive_ns_size(),  batch.arrival_index_delta_size()};
  for (int length : lengths) {
    if (length != n) {
      return absl::InvalidArgumentError("record batch columns differ in length");
    }
  }
  const size_t original_size = out->size();
  const auto fail = [&](const char* why) {
    out->resize(original_size);  // all or nothing: no half batch is left behind
    return absl::InvalidArgumentError(why);
  };
  out->reserve(original_size + static_cast<size_t>(n));
  Nanos scheduled = 0;
  uint64_t arrival_index = 0;
  for (int i = 0; i < n; ++i) {
    const uint64_t durations[] = {batch.queue_ns(i), batch.ttfb_ns(i),    batch.duration_ns(i),
                                  batch.dns_ns(i),   batch.connect_ns(i), batch.tls_ns(i),
                                  batch.send_ns(i),  batch.wait_ns(i),    batch.receive_ns(i)};
    for (uint64_t duration : durations) {
      if (!FitsNanos(duration)) {
        return fail("record batch holds an out-of-range duration");
      }
    }
    if (batch.status(i) > 999) {
      return fail("record batch holds an HTTP status above 999");
    }
    const int error = batch.error(i);
    if (error < 0 || error >= kErrorClassCount) {
      return fail("record batch holds an unknown error class");
    }
    RequestRecord record;
    // A hostile or corrupt batch must not overflow the signed instants (undefined behaviour).
    if (__builtin_add_overflow(scheduled, batch.scheduled_delta_ns(i), &scheduled) ||
        __builtin_add_overflow(scheduled, static_cast<Nanos>(batch.queue_ns(i)), &record.start) ||
        __builtin_add_overflow(record.start, static_cast<Nanos>(batch.duration_ns(i)),
                               &record.end)) {
      return fail("record batch holds an instant out of range");
    }
    if (batch.ttfb_ns(i) > 0 &&
        __builtin_add_overflow(record.start, static_cast<Nanos>(batch.ttfb_ns(i) - 1),
                               &record.ttfb)) {
      return fail("record batch holds a first-byte instant out of range");
    }
    arrival_index += static_cast<uint64_t>(batch.arrival_index_delta(i));
    record.arrival_index = arrival_index;
    record.scheduled = scheduled;
    record.status = static_cast<uint16_t>(batch.status(i));
    record.error = static_cast<ErrorClass>(error);
    record.bytes_in = batch.bytes_in(i);
    record.bytes_out = batch.bytes_out(i);
    record.phases.dns = static_cast<Nanos>(batch.dns_ns(i));
    record.phases.connect = static_cast<Nanos>(batch.connect_ns(i));
    record.phases.tls = static_cast<Nanos>(batch.tls_ns(i));
    record.phases.send = static_cast<Nanos>(batch.send_ns(i));
    record.phases.wait = static_cast<Nanos>(batch.wait_ns(i));
    record.phases.receive = static_cast<Nanos>(batch.receive_ns(i));
    out->push_back(record);
  }
  return absl::OkStatus();
}

}  // namespace barrage::common
