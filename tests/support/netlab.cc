#include "netlab.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "nginx_fixture.h"

namespace barrage::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kNginxBinary[] = "/usr/sbin/nginx";
constexpr char kNetnsEtc[] = "/etc/netns";
constexpr char kNamePrefix[] = "brg";
constexpr int kMaxHosts = 200;
constexpr int kFirstHostOctet = 11;
constexpr size_t kMaxHostName = 20;
constexpr std::chrono::milliseconds kIpTimeout{10000};
constexpr std::chrono::milliseconds kConnectTimeout{2000};
constexpr std::chrono::milliseconds kNginxStartTimeout{5000};
constexpr std::chrono::milliseconds kNginxStopTimeout{2000};
constexpr std::chrono::milliseconds kKillTimeout{5000};
constexpr std::chrono::milliseconds kPollInterval{10};

std::atomic<int> next_lab_index{0};

std::string EtcFolder(const std::string& netns) { return std::string(kNetnsEtc) + "/" + netns; }

bool ValidHostName(std::string_view name) {
  if (name.empty() || name.size() > kMaxHostName || name == "sw") {
    return false;
  }
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  });
}

// The pid in a lab namespace name "brg<pid>-...", or -1 when the name is not one of ours.
pid_t OwnerPid(const std::string& netns) {
  const std::string prefix = kNamePrefix;
  if (netns.compare(0, prefix.size(), prefix) != 0) {
    return -1;
  }
  size_t at = prefix.size();
  size_t digits_end = at;
  while (digits_end < netns.size() && std::isdigit(static_cast<unsigned char>(netns[digits_end]))) {
    ++digits_end;
  }
  if (digits_end == at || digits_end >= netns.size() || netns[digits_end] != '-' ||
      digits_end - at > 9) {
    return -1;
  }
  return static_cast<pid_t>(std::atol(netns.substr(at, digits_end - at).c_str()));
}

std::string CommandLine(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& arg : argv) {
    line += (line.empty() ? "" : " ") + arg;
  }
  return line;
}

}  // namespace

LabNginx::LabNginx(std::string address, int port) : address_(std::move(address)), port_(port) {}

LabNginx::~LabNginx() { Stop(); }

std::string LabNginx::url() const {
  return "http://" + address_ + ":" + std::to_string(port_) + "/";
}

void LabNginx::Stop() {
  if (stopped_ || process_.pid() <= 0) {
    return;
  }
  stopped_ = true;
  process_.Signal(SIGQUIT);
  process_.Wait(kNginxStopTimeout);
}

uint64_t LabNginx::RequestCount() const {
  std::ifstream log(dir_.File("access.log"));
  uint64_t lines = 0;
  std::string line;
  while (std::getline(log, line)) {
    if (!line.empty()) {
      ++lines;
    }
  }
  return lines;
}

std::vector<LabNginx::Request> LabNginx::Requests() const {
  std::vector<Request> requests;
  std::ifstream log(dir_.File("access.log"));
  std::string line;
  while (std::getline(log, line)) {
    // "<seconds>.<milliseconds> <client address> <status>", see the log_format in StartNginx.
    std::istringstream fields(line);
    std::string msec;
    Request request;
    if (!(fields >> msec >> request.client >> request.status)) {
      continue;
    }
    size_t dot = msec.find('.');
    if (dot == std::string::npos) {
      continue;
    }
    request.unix_ms =
        std::atoll(msec.substr(0, dot).c_str()) * 1000 + std::atoll(msec.substr(dot + 1).c_str());
    requests.push_back(std::move(request));
  }
  return requests;
}

NetLab::NetLab() : ip_(IpBinary()) {
  const pid_t pid = getpid();
  const int index = next_lab_index.fetch_add(1);
  prefix_ = std::string(kNamePrefix) + std::to_string(pid) + "-" + std::to_string(index);
  // The octet only helps a human tell labs apart: every lab has its own bridge, so equal
  // subnets in two labs never meet.
  subnet_ = "10.77." + std::to_string((static_cast<int>(pid) + index) % 254 + 1);
  switch_netns_ = prefix_ + "-sw";
}

NetLab::~NetLab() {
  absl::Status status = TearDown();
  if (!status.ok()) {
    std::fprintf(stderr, "NetLab teardown: %s\n", status.ToString().c_str());
  }
}

std::string NetLab::IpBinary() {
  for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (access(path, X_OK) == 0) {
      return path;
    }
  }
  return "";
}

bool NetLab::Available(std::string* why) {
  static std::once_flag once;
  static bool available = false;
  static std::string reason;
  std::call_once(once, [] {
    if (geteuid() != 0) {
      reason = "network namespaces need root (euid is " + std::to_string(geteuid()) + ")";
      return;
    }
    const std::string ip = IpBinary();
    if (ip.empty()) {
      reason = "`ip` (iproute2) not found in /usr/sbin, /sbin, /usr/bin or /bin";
      return;
    }
    const std::string probe = std::string(kNamePrefix) + std::to_string(getpid()) + "-probe";
    ProcessResult added = RunProcess({ip, "netns", "add", probe}, kIpTimeout);
    if (added.exit_code != 0) {
      reason = "`ip netns add` failed: " + added.err;
      return;
    }
    ProcessResult deleted = RunProcess({ip, "netns", "del", probe}, kIpTimeout);
    if (deleted.exit_code != 0) {
      reason = "`ip netns del` failed: " + deleted.err;
      return;
    }
    available = true;
  });
  if (!available && why != nullptr) {
    *why = reason;
  }
  return available;
}

absl::Status NetLab::Ip(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {ip_};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult result = RunProcess(argv, kIpTimeout);
  if (result.exit_code != 0) {
    return absl::InternalError("`" + CommandLine(argv) + "` failed (exit code " +
                               std::to_string(result.exit_code) + "): " + result.err);
  }
  return absl::OkStatus();
}

std::vector<std::string> NetLab::ListNamespaces(const std::string& ip) {
  std::vector<std::string> names;
  ProcessResult result = RunProcess({ip, "netns", "list"}, kIpTimeout);
  std::istringstream lines(result.out);
  std::string line;
  while (std::getline(lines, line)) {
    // "name" or "name (id: 3)"
    std::string name = line.substr(0, line.find(' '));
    if (!name.empty()) {
      names.push_back(name);
    }
  }
  return names;
}

std::vector<pid_t> NetLab::PidsIn(const std::string& ip, const std::string& netns) {
  std::vector<pid_t> pids;
  ProcessResult result = RunProcess({ip, "netns", "pids", netns}, kIpTimeout);
  std::istringstream lines(result.out);
  long pid = 0;
  while (lines >> pid) {
    pids.push_back(static_cast<pid_t>(pid));
  }
  return pids;
}

std::vector<pid_t> NetLab::Pids(const std::string& netns) const { return PidsIn(ip_, netns); }

absl::Status NetLab::DeleteNamespace(const std::string& ip, const std::string& netns) {
  std::string problems;
  const Clock::time_point deadline = Clock::now() + kKillTimeout;
  while (true) {
    std::vector<pid_t> pids = PidsIn(ip, netns);
    // Never this process or init, whatever `ip` printed.
    std::erase_if(pids, [](pid_t pid) { return pid <= 1 || pid == getpid(); });
    if (pids.empty()) {
      break;
    }
    if (Clock::now() >= deadline) {
      problems += "processes still in " + netns + " after SIGKILL:";
      for (pid_t pid : pids) {
        problems += " " + std::to_string(pid);
      }
      problems += "; ";
      break;
    }
    for (pid_t pid : pids) {
      kill(pid, SIGKILL);
    }
    // A killed process leaves the namespace only once the kernel has finished its exit.
    std::this_thread::sleep_for(kPollInterval);
  }
  ProcessResult deleted = RunProcess({ip, "netns", "del", netns}, kIpTimeout);
  if (deleted.exit_code != 0) {
    problems += "`ip netns del " + netns + "`: " + deleted.err + "; ";
  }
  std::error_code error;
  std::filesystem::remove_all(EtcFolder(netns), error);
  if (error) {
    problems += "cannot remove " + EtcFolder(netns) + ": " + error.message() + "; ";
  }
  if (!problems.empty()) {
    return absl::InternalError(problems);
  }
  return absl::OkStatus();
}

int NetLab::RemoveStaleLabs() {
  const std::string ip = IpBinary();
  if (ip.empty()) {
    return 0;
  }
  int removed = 0;
  for (const std::string& netns : ListNamespaces(ip)) {
    pid_t owner = OwnerPid(netns);
    if (owner <= 0 || owner == getpid()) {
      continue;
    }
    if (kill(owner, 0) == 0 || errno != ESRCH) {
      continue;  // its test process still runs (or we cannot tell): not ours to touch
    }
    if (DeleteNamespace(ip, netns).ok()) {
      ++removed;
    }
  }
  return removed;
}

absl::Status NetLab::EnsureSwitch() {
  if (!created_.empty()) {
    return absl::OkStatus();
  }
  static std::once_flag stale_once;
  std::call_once(stale_once, [] { RemoveStaleLabs(); });
  // Namespaces with this lab's prefix can only be left over from a killed process that had our
  // PID before us.
  for (const std::string& netns : ListNamespaces(ip_)) {
    if (netns.compare(0, prefix_.size() + 1, prefix_ + "-") == 0) {
      if (absl::Status deleted = DeleteNamespace(ip_, netns); !deleted.ok()) {
        return deleted;
      }
    }
  }
  if (absl::Status added = Ip({"netns", "add", switch_netns_}); !added.ok()) {
    return added;
  }
  created_.push_back(switch_netns_);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-n", switch_netns_, "link", "set", "lo", "up"},
           {"-n", switch_netns_, "link", "add", "br0", "type", "bridge"},
           {"-n", switch_netns_, "link", "set", "br0", "up"}}) {
    if (absl::Status done = Ip(args); !done.ok()) {
      return done;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<NetLab::Host> NetLab::AddHost(std::string_view name) {
  if (torn_down_) {
    return absl::FailedPreconditionError("NetLab::AddHost after TearDown");
  }
  if (ip_.empty()) {
    return absl::FailedPreconditionError("`ip` (iproute2) not found");
  }
  if (!ValidHostName(name)) {
    return absl::InvalidArgumentError("bad lab host name \"" + std::string(name) +
                                      "\": use 1 to 20 letters, digits, '-' or '_', not \"sw\"");
  }
  for (const Host& host : hosts_) {
    if (host.name == name) {
      return absl::InvalidArgumentError("lab host \"" + std::string(name) + "\" already exists");
    }
  }
  if (hosts_.size() >= static_cast<size_t>(kMaxHosts)) {
    return absl::ResourceExhaustedError("a lab has at most 200 hosts");
  }
  if (absl::Status ready = EnsureSwitch(); !ready.ok()) {
    return ready;
  }
  const int index = static_cast<int>(hosts_.size());
  Host host{.name = std::string(name),
            .netns = prefix_ + "-" + std::string(name),
            .address = subnet_ + "." + std::to_string(kFirstHostOctet + index)};
  if (absl::Status added = Ip({"netns", "add", host.netns}); !added.ok()) {
    return added;
  }
  created_.push_back(host.netns);
  // The switch end lives in the switch namespace, so its short name cannot clash with anything.
  const std::string port = "v" + std::to_string(index);
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-n", host.netns, "link", "set", "lo", "up"},
           {"-n", switch_netns_, "link", "add", port, "type", "veth", "peer", "name", "eth0",
            "netns", host.netns},
           {"-n", switch_netns_, "link", "set", port, "master", "br0", "up"},
           {"-n", host.netns, "addr", "add", host.address + "/24", "dev", "eth0"},
           {"-n", host.netns, "link", "set", "eth0", "up"}}) {
    if (absl::Status done = Ip(args); !done.ok()) {
      return done;
    }
  }
  hosts_.push_back(host);
  return host;
}

absl::Status NetLab::WriteHostsFiles() {
  if (torn_down_) {
    return absl::FailedPreconditionError("NetLab::WriteHostsFiles after TearDown");
  }
  std::string content = "127.0.0.1 localhost\n::1 localhost\n";
  for (const Host& host : hosts_) {
    content += host.address + " " + host.name + "\n";
  }
  wrote_hosts_files_ = true;
  for (const Host& host : hosts_) {
    const std::string folder = EtcFolder(host.netns);
    std::error_code error;
    std::filesystem::create_directories(folder, error);
    if (error) {
      return absl::InternalError("cannot create " + folder + ": " + error.message());
    }
    std::ofstream out(folder + "/hosts", std::ios::trunc);
    out << content;
    out.close();
    if (!out) {
      return absl::InternalError("cannot write " + folder + "/hosts");
    }
  }
  return absl::OkStatus();
}

absl::Status NetLab::Start(ChildProcess& process, const Host& host,
                           const std::vector<std::string>& argv) {
  if (torn_down_) {
    return absl::FailedPreconditionError("NetLab::Start after TearDown");
  }
  if (host.netns.compare(0, prefix_.size() + 1, prefix_ + "-") != 0) {
    return absl::InvalidArgumentError("host " + host.netns + " is not in lab " + prefix_);
  }
  std::vector<std::string> full = {ip_, "netns", "exec", host.netns};
  full.insert(full.end(), argv.begin(), argv.end());
  return process.Start(full);
}

ProcessResult NetLab::Run(const Host& host, const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout) {
  if (torn_down_ || host.netns.compare(0, prefix_.size() + 1, prefix_ + "-") != 0) {
    ProcessResult refused;
    refused.err = "NetLab::Run: host " + host.netns + " is not in the live lab " + prefix_;
    return refused;
  }
  std::vector<std::string> full = {ip_, "netns", "exec", host.netns};
  full.insert(full.end(), argv.begin(), argv.end());
  return RunProcess(full, timeout);
}

bool NetLab::Connects(const Host& from, const std::string& address, int port) {
  // Address and port go in as positional parameters, never spliced into the script.
  ProcessResult result =
      Run(from, {"bash", "-c", "exec 3<>\"/dev/tcp/$0/$1\"", address, std::to_string(port)},
          kConnectTimeout);
  return result.exit_code == 0;
}

absl::StatusOr<std::unique_ptr<LabNginx>> NetLab::StartNginx(const Host& host, int port) {
  auto nginx = std::unique_ptr<LabNginx>(new LabNginx(host.address, port));
  const std::string& d = nginx->dir();
  NginxConfig config;
  config.listen = host.address + ":" + std::to_string(port);
  config.access_log = true;
  config.log_format = "$msec $remote_addr $status";  // what LabNginx::Requests() parses
  if (absl::Status written = WriteNginxConfig(d, config); !written.ok()) {
    return written;
  }
  // -e: nginx opens its error log before reading the config; keep that inside the temp dir too.
  absl::Status started = Start(nginx->process_, host,
                               {kNginxBinary, "-p", d + "/", "-c", nginx->dir_.File("nginx.conf"),
                                "-e", nginx->dir_.File("error.log")});
  if (!started.ok()) {
    return started;
  }
  const Clock::time_point deadline = Clock::now() + kNginxStartTimeout;
  bool exited = false;
  while (Clock::now() < deadline) {
    if (Connects(host, host.address, port)) {
      return nginx;
    }
    if (nginx->process_.Exited()) {
      exited = true;
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  ProcessResult result = nginx->process_.Wait(std::chrono::milliseconds(0));
  nginx->stopped_ = true;
  std::ifstream log(nginx->dir_.File("error.log"));
  std::stringstream log_text;
  log_text << log.rdbuf();
  return absl::UnavailableError(
      (exited ? "nginx exited with code " + std::to_string(result.exit_code)
              : std::string("nginx did not accept connections within 5 s")) +
      " on " + host.address + ":" + std::to_string(port) + " in " + host.netns +
      "; stderr: " + result.err + "; error.log: " + log_text.str());
}

std::vector<std::string> NetLab::Namespaces() const { return created_; }

absl::Status NetLab::TearDown() {
  torn_down_ = true;
  std::string problems;
  // Hosts first, the switch last: a host's veth pair disappears with the host namespace.
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    if (absl::Status deleted = DeleteNamespace(ip_, *it); !deleted.ok()) {
      problems += std::string(deleted.message());
    }
  }
  created_.clear();
  if (wrote_hosts_files_) {
    // Removes /etc/netns only when no other lab (or anything else) uses it.
    rmdir(kNetnsEtc);
  }
  if (!problems.empty()) {
    return absl::InternalError(problems);
  }
  return absl::OkStatus();
}

}  // namespace barrage::testing
