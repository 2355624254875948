#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "process.h"

namespace barrage::testing {

// nginx running inside one lab host, listening on that host's 10.77 address. Answers every request
// with 200 "ok\n" and logs each one (wall-clock time and client address) to its own access log.
// Made by NetLab::StartNginx(); Stop() or the destructor ends it (SIGQUIT, then SIGKILL after 2 s).
// NetLab's teardown kills it too, so it may outlive the lab.
class LabNginx {
 public:
  // One line of the access log.
  struct Request {
    int64_t unix_ms = 0;  // when nginx finished it (wall clock, milliseconds)
    std::string client;   // the client's address, e.g. "10.77.12.11"
    int status = 0;
  };

  ~LabNginx();
  LabNginx(const LabNginx&) = delete;
  LabNginx& operator=(const LabNginx&) = delete;

  // Graceful stop (SIGQUIT), SIGKILL to the group after 2 s. Idempotent. After it, every
  // request nginx finished is in the access log.
  void Stop();

  const std::string& address() const { return address_; }
  int port() const { return port_; }
  // "http://<address>:<port>/"; reachable only from inside the lab's host namespaces.
  std::string url() const;
  const std::string& dir() const { return dir_.path(); }
  pid_t pid() const { return process_.pid(); }

  // Lines in the access log: requests nginx has finished so far.
  uint64_t RequestCount() const;
  // Every logged request, oldest first.
  std::vector<Request> Requests() const;

 private:
  friend class NetLab;
  LabNginx(std::string address, int port);

  std::string address_;
  int port_;
  TempDir dir_;
  ChildProcess process_;
  bool stopped_ = false;
};

// A private network of Linux network namespaces on this machine, so that tests can run
// coordinator, agents and target as if on separate hosts. One "switch" namespace holds a bridge;
// every host namespace is joined to it by a veth pair and gets an address 10.77.<octet>.<n>/24,
// no default route (nothing it sends can leave the lab), and its own loopback.
//
// Names and the third octet come from the test process id (namespaces "brg<pid>-<k>-sw",
// "brg<pid>-<k>-<host>", k counting the labs of this process), so parallel test runs never
// collide. Everything is created lazily by the first AddHost().
//
// Life cycle: construct, AddHost() as needed, optionally WriteHostsFiles(), Start()/Run()
// processes inside hosts; TearDown() or the destructor (which also runs when an ASSERT ended the
// test early) kills every process in every lab namespace by PID (`ip netns pids`, SIGKILL),
// deletes the namespaces and removes their /etc/netns folders.
//
// Needs root and iproute2; tests check Available() first and skip with its reason.
class NetLab {
 public:
  // One host of the lab.
  struct Host {
    std::string name;     // the test's name for it, e.g. "target"
    std::string netns;    // its namespace, e.g. "brg1234-0-target"
    std::string address;  // its address on the lab bridge, e.g. "10.77.12.11"
  };

  NetLab();
  ~NetLab();
  NetLab(const NetLab&) = delete;
  NetLab& operator=(const NetLab&) = delete;

  // Whether this process can build a lab: running as root, `ip` found, and a probe namespace
  // can be added and deleted. Checked once per process.
  // @param why set to the reason when it cannot (may be null).
  static bool Available(std::string* why);

  // The path of the `ip` binary, or "" when not found.
  static std::string IpBinary();

  // Adds a host namespace joined to the lab bridge (creating the switch namespace first if
  // needed). At most 200 hosts.
  // @param name letters, digits, '-' or '_'; at most 20 characters; unique in this lab; not "sw".
  // @return the host, InvalidArgument for a bad or duplicate name, Internal (with the failing
  //     `ip` command and its stderr) when the namespace could not be built.
  absl::StatusOr<Host> AddHost(std::string_view name);

  // Writes /etc/netns/<netns>/hosts for every host, naming every host of the lab (and
  // localhost), so processes started later inside a host resolve the others by name
  // (`ip netns exec` bind-mounts the file over /etc/hosts). Call again after adding hosts.
  absl::Status WriteHostsFiles();

  // Starts argv inside `host` (`ip netns exec NETNS argv...`; argv[0] is searched in PATH).
  // The process keeps the child's PID: `ip netns exec` execs argv in place.
  absl::Status Start(ChildProcess& process, const Host& host, const std::vector<std::string>& argv);

  // Runs argv inside `host` and waits at most `timeout` (see RunProcess).
  ProcessResult Run(const Host& host, const std::vector<std::string>& argv,
                    std::chrono::milliseconds timeout);

  // Whether something inside `from` can open a TCP connection to address:port right now
  // (bash's /dev/tcp, run inside the namespace; gives up after 2 s).
  bool Connects(const Host& from, const std::string& address, int port);

  // Starts nginx inside `host` on <host address>:port and waits (up to 5 s) until it accepts
  // connections, checked from inside `host`.
  // @return the running nginx, or the reason (with nginx's error log) it did not come up.
  absl::StatusOr<std::unique_ptr<LabNginx>> StartNginx(const Host& host, int port);

  // PIDs of the processes inside a namespace right now (`ip netns pids`).
  std::vector<pid_t> Pids(const std::string& netns) const;

  // Kills every process in every lab namespace (SIGKILL, repeated until none is left, at most
  // 5 s), deletes the namespaces and the /etc/netns folders. Idempotent; the lab can not be
  // used afterwards.
  // @return Internal naming what could not be cleaned up (everything else is still cleaned).
  absl::Status TearDown();

  // Every namespace this lab created and has not deleted (the switch first).
  std::vector<std::string> Namespaces() const;
  const std::vector<Host>& hosts() const { return hosts_; }
  // "brg<pid>-<k>": every namespace of this lab starts with it.
  const std::string& prefix() const { return prefix_; }
  // "10.77.<octet>"
  const std::string& subnet() const { return subnet_; }

  // Namespaces named "brg<pid>-..." whose process is gone (left by a test binary that was
  // killed before its teardown ran); kills their processes and deletes them.
  // @return how many namespaces were removed.
  static int RemoveStaleLabs();

 private:
  absl::Status EnsureSwitch();
  // Runs `ip args...` with a 10 s bound. @return Internal with the command and stderr on failure.
  absl::Status Ip(const std::vector<std::string>& args) const;
  // Kills every process in `netns`, deletes it and its /etc/netns folder.
  static absl::Status DeleteNamespace(const std::string& ip, const std::string& netns);
  static std::vector<pid_t> PidsIn(const std::string& ip, const std::string& netns);
  static std::vector<std::string> ListNamespaces(const std::string& ip);

  std::string ip_;
  std::string prefix_;
  std::string subnet_;
  std::string switch_netns_;
  // Every namespace created and not yet deleted, the switch first; a host whose set-up failed
  // midway is here but not in hosts_.
  std::vector<std::string> created_;
  std::vector<Host> hosts_;
  bool wrote_hosts_files_ = false;
  bool torn_down_ = false;
};

}  // namespace barrage::testing
