#include "barrage/common/share_codec.h"

#include "barrage/common/weighted_slices.h"
#include "barrage/v1/agent.pb.h"

namespace barrage::common {

void EncodeShare(const AgentShare& share, v1::Share* out) {
  out->Clear();
  const HttpRequestSpec& request = share.plan.request;
  v1::HttpRequest* wire_request = out->mutable_request();
  wire_request->set_url(request.url);
  wire_request->set_method(request.method);
  for (const std::string& header : request.headers) {
    wire_request->add_headers(header);
  }
  wire_request->set_body(request.body);
  const LoadSpec& load = share.plan.load;
  v1::Load* wire_load = out->mutable_load();
  wire_load->set_open_loop(load.rate.has_value());
  wire_load->set_rate(load.rate.value_or(0));
  wire_load->set_arrival(static_cast<uint32_t>(load.arrival));
  wire_load->set_burstiness(load.burstiness);
  wire_load->set_concurrency(load.concurrency);
  wire_load->set_duration_ns(load.duration);
  wire_load->set_requests(load.requests);
  wire_load->set_warmup_ns(load.warmup);
  wire_load->set_timeout_ns(load.timeout);
  wire_load->set_grace_ns(load.grace);
  wire_load->set_seed(load.seed);
  wire_load->set_threads(load.threads);
  out->set_slice_index(share.slice_index);
  out->set_slice_count(share.slice_count);
  out->set_concurrency(share.concurrency);
  out->set_requests(share.requests);
  for (uint32_t weight : share.slice_weights) {
    out->add_slice_weights(weight);
  }
}

absl::StatusOr<AgentShare> DecodeShare(const v1::Share& in) {
  AgentShare share;
  HttpRequestSpec& request = share.plan.request;
  request.url = in.request().url();
  request.method = in.request().method();
  request.headers.assign(in.request().headers().begin(), in.request().headers().end());
  request.body = in.request().body();
  LoadSpec& load = share.plan.load;
  const v1::Load& wire_load = in.load();
  if (wire_load.open_loop()) {
    load.rate = wire_load.rate();
  }
  if (wire_load.arrival() > static_cast<uint32_t>(ArrivalKind::kGamma)) {
    return absl::InvalidArgumentError("unknown arrival process " +
                                      std::to_string(wire_load.arrival()));
  }
  load.arrival = static_cast<ArrivalKind>(wire_load.arrival());
  load.burstiness = wire_load.burstiness();
  load.concurrency = wire_load.concurrency();
  load.duration = wire_load.duration_ns();
  load.requests = wire_load.requests();
  load.warmup = wire_load.warmup_ns();
  load.timeout = wire_load.timeout_ns();
  load.grace = wire_load.grace_ns();
  load.seed = wire_load.seed();
  load.threads = wire_load.threads();
  share.slice_index = in.slice_index();
  share.slice_count = in.slice_count();
  share.concurrency = in.concurrency();
  share.requests = in.requests();
  share.slice_weights.assign(in.slice_weights().begin(), in.slice_weights().end());
  if (!share.slice_weights.empty() && share.slice_weights.size() != share.slice_count) {
    return absl::InvalidArgumentError("slice weights for " +
                                      std::to_string(share.slice_weights.size()) + " agents, but " +
                                      std::to_string(share.slice_count) + " slices");
  }
  if (!share.slice_weights.empty()) {
    if (absl::Status weights = WeightedSlices::Make(share.slice_weights).status(); !weights.ok()) {
      return weights;
    }
  }
  if (share.slice_count == 0 || share.slice_index >= share.slice_count) {
    return absl::InvalidArgumentError("slice " + std::to_string(share.slice_index) + " of " +
                                      std::to_string(share.slice_count) + " does not exist");
  }
  if (absl::Status valid = ValidatePlan(share.plan); !valid.ok()) {
    return valid;
  }
  return share;
}

}  // namespace barrage::common
