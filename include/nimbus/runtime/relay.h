// Relays: aggregation that does not pass the master's one link. A relay is one worker to its
// master and a master to a group of workers. It dials out to the master as every worker does,
// takes an ASSIGN that names its group of shards, starts the group's workers (processes that
// dial out to it, or threads in its own process), and serves each round by sending it on to
// all of them and summing their replies into one reply up:
//
//   master --ROUND(x)--> relay --ROUND(x)--> workers 1..G
//   master <--REPLY(sum_g w_g)-- relay <--REPLY(w_g)-- workers 1..G
//
// so the master's link carries one request and one reply per relay, not per worker. Newton's
// rounds are sums (the data terms' value, gradient, Hessian diagonal and products), so the
// master cannot tell a relay from one worker whose shard is the group's rows. In the general
// form a relay holds the union of its workers' supports. A relay with more shards than its
// fanout starts relays of its own (a tree: wire/messages.h's RelaysUnder). Its workers are
// replaced as the master replaces its own (the relay runs the same RemoteExecutor); a relay
// that dies is replaced by its master, and its workers, which end with it, by the new relay's.
#pragma once

#include <memory>
#include <vector>

#include "nimbus/core/status.h"
#include "nimbus/runtime/remote_executor.h"
#include "nimbus/runtime/worker_process.h"
#include "nimbus/wire/codec.h"

namespace nimbus {

// `shards` (of one store) cut into `groups` relays of consecutive shards, as equal as can be,
// each with `settings`' runtime, fanout and address for its workers, and its shards' slice of
// settings.hosts (one a shard, or none). A shard with folds or a part of text cannot be relayed
// (InvalidArgument).
Result<std::vector<ShardAssignment>> GroupForRelays(const std::vector<ShardAssignment>& shards, int groups,
                                                    const RelayGroup& settings);

// The relay an ASSIGN with a group describes, its workers started and loaded; `ready` becomes
// the group's (rows, nonzeros and curvature summed, the union of the supports).
// `master`: the endpoint this relay dials (its workers on other hosts dial the relay at its
// address toward it).
Result<std::unique_ptr<RoundServer>> StartRelay(int relay, const AssignBody& body, const std::string& master,
                                                WorkerReady* ready);

}  // namespace nimbus
