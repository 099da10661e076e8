// The round simulator against rounds worked out by hand: messages through the master's link,
// processor sharing on shared cores, the master's per-reply work, cold starts, stragglers,
// the profile's interpolation in K, and Newton's rounds (flat in K, messages of the vectors the
// profile recorded).
#include "nimbus/metrics/simulator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace nimbus {
namespace {

// One calibration point: every worker round costs exactly `compute` seconds (no fitted
// costs, so the problem's size does not change it), 9 iterations = 10 rounds.
Profile FlatProfile(double compute = 1.0) {
  Profile profile;
  profile.rows = 1000;
  profile.cols = 100;
  profile.nnz = 10000;
  profile.cores = 2;
  ProfilePoint point;
  point.workers = 1;
  point.iterations = 9;
  point.rounds = 10;
  point.compute_seconds = compute;
  profile.points = {point};
  profile.message_bandwidth = 1e9;
  profile.shard_load_bandwidth = 1e9;
  return profile;
}

// Messages and starts that cost nothing.
Platform FreePlatform(int cores) {
  Platform platform;
  platform.name = "test";
  platform.cores = cores;
  platform.master_bandwidth = platform.worker_bandwidth = platform.storage_bandwidth = 1e18;
  return platform;
}

Scenario ScenarioOf(const Profile& profile, int workers) {
  Scenario scenario;
  scenario.rows = profile.rows;
  scenario.cols = profile.cols;
  scenario.nnz = profile.nnz;
  scenario.workers = workers;
  return scenario;
}

// A ROUND or REPLY of d = 100 doubles is 8 * 100 + 160 bytes on the wire.
constexpr double kMessageBytes = 960;

TEST(Simulator, WorkersOnSharedCoresShareThemEqually) {
  const Profile profile = FlatProfile();
  // Four rounds of 1 s on 2 cores all end at 2 s; three end at 1.5 s.
  Result<Prediction> four = Simulate(profile, FreePlatform(2), ScenarioOf(profile, 4), Prices{});
  ASSERT_TRUE(four.ok()) << four.status().ToString();
  EXPECT_EQ(four->iterations, 9);
  EXPECT_NEAR(four->round_seconds, 2.0, 1e-12);
  EXPECT_NEAR(four->solve_seconds, 20.0, 1e-9);
  EXPECT_NEAR(four->compute_share, 0.5, 1e-12);  // the mean worker computes 1 s of each 2
  EXPECT_NEAR(four->waiting_share, 0.5, 1e-12);
  EXPECT_NEAR(four->communication_share, 0.0, 1e-12);
  Result<Prediction> three = Simulate(profile, FreePlatform(2), ScenarioOf(profile, 3), Prices{});
  ASSERT_TRUE(three.ok());
  EXPECT_NEAR(three->round_seconds, 1.5, 1e-12);
  // A CPU each: one round is one worker's time, whatever K.
  Result<Prediction> own = Simulate(profile, FreePlatform(0), ScenarioOf(profile, 64), Prices{});
  ASSERT_TRUE(own.ok());
  EXPECT_NEAR(own->round_seconds, 1.0, 1e-12);
}

TEST(ShareCores, StaggeredArrivalsAsWorkedOutByHand) {
  // One core: job 0 (2 s of work) alone from 0 to 1, then with job 1 (1 s) at half a core each:
  // both end at 3. Job 2 arrives at 5 to an idle core and ends at 6.
  const std::vector<double> one = ShareCores({0, 1, 5}, {2, 1, 1}, 1);
  EXPECT_NEAR(one[0], 3.0, 1e-12);
  EXPECT_NEAR(one[1], 3.0, 1e-12);
  EXPECT_NEAR(one[2], 6.0, 1e-12);
  // Two cores, three jobs of 1 s from 0: two thirds of a core each, all end at 1.5.
  for (const double end : ShareCores({0, 0, 0}, {1, 1, 1}, 2)) EXPECT_NEAR(end, 1.5, 1e-12);
}

TEST(Simulator, OnSharedCoresEveryMessageTakesCpuAtBothEndsAndTheMasterWeighsTwo) {
  const Profile profile = FlatProfile();
  Platform platform = FreePlatform(1);
  platform.message_cpu_seconds = 0.5;  // at each end of every message; the wires are free
  // A message is sealed whole before it leaves and opened whole once it is in: its receiver's
  // end starts when its sender's is done.
  // 0-0.5: the master's end of ROUND 0 alone (weight 2, the whole core).
  // 0.5-1.25: the master's end of ROUND 1 (2/3 of the core) and worker 0's end of ROUND 0 (1/3):
  //   the master's is done, worker 0's has 0.25 left.
  // 1.25-1.75: worker 0's end and worker 1's, half the core each: worker 0's is done, worker 1's
  //   has 0.25 left.
  // 1.75-2.25: worker 1's end and worker 0's compute: worker 1's is done, 0.75 compute left.
  // 2.25-3.75: both compute, half each: worker 0 is done, worker 1 has 0.25 left.
  // 3.75-4.25: worker 0's end of REPLY 0 and worker 1's compute: the compute is done, the end
  //   has 0.25 left.
  // 4.25-4.75: the two workers' ends of their REPLYs: worker 0's is done (REPLY 0 has left),
  //   worker 1's has 0.25 left.
  // 4.75-5.5: the master's end of REPLY 0 (2/3) and worker 1's (1/3): both done.
  // 5.5-6: the master's end of REPLY 1 alone; its own work costs nothing here.
  Result<Prediction> p = Simulate(profile, platform, ScenarioOf(profile, 2), Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NEAR(p->round_seconds, 6.0, 1e-12);
  // With free messages both compute on the one core from 0 and end at 2.
  EXPECT_NEAR(p->communication_share, 1 - 2 / 6.0, 1e-12);
  EXPECT_EQ(p->bytes_per_round, static_cast<int64_t>(4 * kMessageBytes));
  // The local platform takes these costs from the profile: its one-way message time is all CPU.
  Profile measured = profile;
  measured.message_latency_seconds = 4e-5;
  const Platform local = Platform::Local(measured);
  EXPECT_EQ(local.message_cpu_seconds, 4e-5);
  EXPECT_DOUBLE_EQ(local.message_cpu_seconds_per_byte, 1e-9);
  EXPECT_EQ(local.latency_seconds, 0);
  EXPECT_GE(local.worker_bandwidth, 1e15);  // on 127.0.0.1 the kernel's copy is in that CPU: no wire
  EXPECT_GE(local.master_bandwidth, 1e15);
}

TEST(Simulator, TheMasterSealsEveryRoundBeforeAnyLeaves) {
  const Profile profile = FlatProfile();
  Platform platform = FreePlatform(3);
  platform.message_cpu_seconds = 0.5;
  // Two workers on 3 cores; the master's ends weigh 2 (2 CPUs each). 0-0.25 and 0.25-0.5: the
  // master seals ROUND 0 and ROUND 1, and both leave at 0.5. 0.5-1: the workers open them, a
  // CPU each; 1-2: both compute; 2-2.5: both seal their REPLYs; 2.5-2.75 and 2.75-3: the master
  // opens them. Were ROUND 0 to leave once sealed, worker 0 would open it beside the sealing
  // of ROUND 1 (the third CPU), be a quarter ahead all round, and the round would end at 2.75.
  Result<Prediction> p = Simulate(profile, platform, ScenarioOf(profile, 2), Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NEAR(p->round_seconds, 3.0, 1e-12);
}

TEST(Simulator, ARelayReadsEveryMessageBeforeItsDelayAndWritesItOnWhenDue) {
  const Profile profile = FlatProfile();
  Platform platform = FreePlatform(2);
  platform.message_cpu_seconds = 0.5;
  platform.latency_seconds = 0.3;
  platform.relay_read_seconds_per_byte = 0.6 / kMessageBytes;  // 0.6 s to read a message in
  platform.relay_write_seconds_per_byte = 0.4 / kMessageBytes;  // 0.4 s to write it on
  // One worker on 2 cores. ROUND: the master's end alone (weight 2, both CPUs) is done at 0.25;
  // the relay reads it by 0.85; its delay ends at 1.15, and the relay writes it by 1.55; the
  // worker's end opens it by 2.05, computes by 3.05 and seals the REPLY by 3.55; the relay reads
  // it by 4.15 and writes it from 4.45 to 4.85; the master's end opens it by 5.1.
  Result<Prediction> relayed = Simulate(profile, platform, ScenarioOf(profile, 1), Prices{});
  ASSERT_TRUE(relayed.ok()) << relayed.status().ToString();
  EXPECT_NEAR(relayed->round_seconds, 5.1, 1e-12);
  // A wire of 0.5 s: the relay's writing (0.4 s from the delay's end) is hidden in it. ROUND in
  // at 0.85 + 0.3 + 0.5 = 1.65, opened by 2.15, computed by 3.15, REPLY sealed by 3.65, read by
  // 4.25, in at 5.05, opened by 5.3.
  platform.worker_bandwidth = kMessageBytes / 0.5;
  Result<Prediction> wired = Simulate(profile, platform, ScenarioOf(profile, 1), Prices{});
  ASSERT_TRUE(wired.ok()) << wired.status().ToString();
  EXPECT_NEAR(wired->round_seconds, 5.3, 1e-12);
  // Without the relay: 0.25 + 0.3 + 0.5 + 0.5 + 1 + 0.5 + 0.3 + 0.5 + 0.25.
  platform.relay_read_seconds_per_byte = platform.relay_write_seconds_per_byte = 0;
  Result<Prediction> direct = Simulate(profile, platform, ScenarioOf(profile, 1), Prices{});
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_NEAR(direct->round_seconds, 4.1, 1e-12);
}

TEST(Simulator, ARoundWithLatencyBandwidthAndMasterWorkAsWorkedOutByHand) {
  Profile profile = FlatProfile();
  profile.master_seconds_per_reply_coordinate = 0.001;  // 0.1 s per reply at d = 100
  profile.master_seconds_per_coordinate = 0.002;        // 0.2 s for the z-update
  Platform platform = FreePlatform(0);
  platform.latency_seconds = 0.1;
  platform.master_bandwidth = kMessageBytes;      // 1 s per message on the master's link
  platform.worker_bandwidth = kMessageBytes / 2;  // 2 s through a worker's link
  platform.launch_seconds = 0.25;
  platform.cold_start_median = 0.5;
  platform.storage_latency_seconds = 0.05;
  platform.storage_bandwidth = (1000 * 16 + 10000 * 12) / 2.0;  // a shard loads in 1 s
  // Out: arrivals 0 + 0.1 + 2 = 2.1 and 1 + 0.1 + 2 = 3.1; computed at 3.1 and 4.1.
  // Back: 3.1 + 0.1 + 2 = 5.2 and max(4.1 + 0.1 + 2, 5.2 + 1) = 6.2. Master: 5.3, 6.3, and
  // the z-update to 6.5.
  Result<Prediction> p = Simulate(profile, platform, ScenarioOf(profile, 2), Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NEAR(p->round_seconds, 6.5, 1e-12);
  // Free messages: both back at 1, the master at 1.1, 1.2, then 1.4.
  EXPECT_NEAR(p->communication_share, 1 - 1.4 / 6.5, 1e-12);
  EXPECT_NEAR(p->master_share, 0.4 / 6.5, 1e-12);
  // Setup: the second launch at 0.25, its cold start 0.5, the shard 0.05 + 1, and 10 trips
  // over the link at 0.1 each (the connection's handshake, HELLO, ASSIGN and READY).
  EXPECT_NEAR(p->setup_seconds, 0.25 + 0.5 + 1.05 + 1.0, 1e-12);
  EXPECT_NEAR(p->total_seconds, p->setup_seconds + 10 * 6.5, 1e-9);
  EXPECT_NEAR(p->cold_start_seconds, 0.25 + 0.5, 1e-12);
  EXPECT_NEAR(p->load_seconds, 1.05, 1e-12);
  EXPECT_NEAR(p->cold_start_share, 0.75 / p->total_seconds, 1e-12);
  // The price: both functions for the whole run, two requests, for each worker the manifest
  // and a HEAD and a GET of its shard (68 kB is one range), and the master.
  const Prices prices;
  const double function_seconds = 2 * p->total_seconds;
  const double expected = function_seconds * prices.function_memory_gb * prices.lambda_gb_second +
                          2 * prices.lambda_request + 2 * 3 * prices.s3_get +
                          p->total_seconds / 3600 * prices.master_hour;
  EXPECT_NEAR(p->gb_seconds, function_seconds * prices.function_memory_gb, 1e-9);
  EXPECT_NEAR(p->dollars, expected, 1e-12);
}

// Relays (runtime/relay.h): the master's link carries one ROUND and one REPLY a relay; each
// relay's link carries its workers', and it sums their replies and puts z on the whole model.
TEST(Simulator, ARoundThroughRelaysAsWorkedOutByHand) {
  Profile profile = FlatProfile();
  profile.master_seconds_per_reply_coordinate = 0.001;  // 0.1 s per reply summed, at the master or a relay
  profile.master_seconds_per_coordinate = 0.002;        // 0.2 s for the z-update, or a relay's whole z
  profile.process_start_seconds = 0.3;                  // a relay, from its launch to running
  Platform platform = FreePlatform(0);
  platform.latency_seconds = 0.1;
  platform.master_bandwidth = kMessageBytes;      // 1 s per message on the master's link
  platform.relay_bandwidth = 2 * kMessageBytes;   // 0.5 s on a relay's
  platform.worker_bandwidth = kMessageBytes / 2;  // 2 s through a worker's link
  platform.launch_seconds = 0.25;
  platform.cold_start_median = 0.5;
  platform.storage_latency_seconds = 0.05;
  platform.storage_bandwidth = (250 * 16 + 2500 * 12) / 1.0;  // a quarter of the rows loads in 1 s
  Scenario scenario = ScenarioOf(profile, 4);
  scenario.relays = 2;
  // The relays' ROUNDs in at 0 + 0.1 + 1 = 1.1 and 1 + 0.1 + 1 = 2.1. A relay's ROUND in at t:
  // its workers' in at t + 0.1 + 2 and t + 0.5 + 0.1 + 2, computed at t + 3.1 and t + 3.6;
  // their REPLYs in at t + 5.2 and max(t + 5.7, t + 5.2 + 0.5) = t + 5.7, summed by t + 5.3 and
  // t + 5.8, its z by t + 6.0: the relays' REPLYs leave at 7.1 and 8.1, are in at 8.2 and
  // max(9.2, 8.2 + 1) = 9.2, summed by 8.3 and 9.3, and the z-update ends the round at 9.5.
  Result<Prediction> p = Simulate(profile, platform, scenario, Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NEAR(p->round_seconds, 9.5, 1e-12);
  // Free messages: every worker done at 1, a relay's sums at 1.1 and 1.2, its z at 1.4; the
  // master's sums at 1.5 and 1.6, its z-update at 1.8.
  EXPECT_NEAR(p->communication_share, 1 - 1.8 / 9.5, 1e-12);
  EXPECT_NEAR(p->master_share, 0.4 / 9.5, 1e-12);
  EXPECT_EQ(p->bytes_per_round, 2 * 2 * static_cast<int64_t>(kMessageBytes));
  EXPECT_EQ(p->relay_hosts, 2);
  // Setup: relay 1 launched at 0.25 runs at 0.55 and launches its second worker at 0.8; then
  // its cold start 0.5, the shard 0.05 + 1 and 10 trips at 0.1.
  EXPECT_NEAR(p->setup_seconds, 0.8 + 0.5 + 1.05 + 1.0, 1e-12);
  // The relays' hosts are priced as the master's.
  const Prices prices;
  const double expected = 4 * p->total_seconds * prices.function_memory_gb * prices.lambda_gb_second +
                          4 * prices.lambda_request + 4 * 3 * prices.s3_get + 3 * p->total_seconds / 3600 * prices.master_hour;
  EXPECT_NEAR(p->dollars, expected, 1e-12);

  // A tree: 8 workers, no node with more than 2 children: 2 relays of 4, each with 2 of 2.
  scenario = ScenarioOf(profile, 8);
  scenario.relays = 2;
  scenario.relay_fanout = 2;
  p = Simulate(profile, platform, scenario, Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->relay_hosts, 6);
  EXPECT_EQ(p->bytes_per_round, 2 * 2 * static_cast<int64_t>(kMessageBytes));

  // Relays are not modelled on shared cores, nor more relays than workers.
  EXPECT_FALSE(Simulate(profile, FreePlatform(2), scenario, Prices{}).ok());
  scenario.relays = 9;
  EXPECT_FALSE(Simulate(profile, platform, scenario, Prices{}).ok());
}

// The storage reduction (ScatterReduce through S3): the master puts the round's vector once and
// gets one sum; the workers scatter their replies in K slices and each sums one.
TEST(Simulator, ARoundThroughStorageAsWorkedOutByHand) {
  const Profile profile = FlatProfile();
  Platform platform = FreePlatform(0);
  platform.latency_seconds = 0.1;
  platform.master_bandwidth = kMessageBytes;      // 1 s per REPLY-sized message on the master's link
  platform.worker_bandwidth = kMessageBytes / 2;  // 2 s through a worker's link, the slower
  platform.storage_bandwidth = kMessageBytes;
  platform.storage_latency_seconds = 0.05;
  Scenario scenario = ScenarioOf(profile, 2);
  scenario.storage_reduction = true;
  // The vector (800 bytes) is put by 0.05 + 800/960; the ROUNDs (160 bytes) notify worker 2 at
  // that + 2 * 160/960 + 0.1 = 1.3167, which gets the vector (0.05 + 800/480), computes (1) and
  // puts its slices (0.05 + 960/480): scattered at 6.0833. A reducer polls and gets its slices
  // (0.05 + 0.05 + 960/480) and puts its slice of the sum (0.05 + 400/480): 9.0667. The master
  // polls and gets the sum (0.05 + 0.05 + 800/960): 10.
  Result<Prediction> p = Simulate(profile, platform, scenario, Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NEAR(p->round_seconds, 10.0, 1e-12);
  EXPECT_NEAR(p->communication_share, 1 - 1.0 / 10, 1e-12);  // free: the compute alone
  EXPECT_EQ(p->bytes_per_round, 800 + 800 + 2 * 160);
  EXPECT_EQ(p->storage_requests_per_round, 2 * 4 + 4 * 2 + 2);
  // Each round's 7 PUTs (the vector, 4 slices, 2 sums) and 11 GETs and polls are priced too.
  const Prices prices;
  scenario.storage_reduction = false;
  const double star_priced = 2 * p->total_seconds * prices.function_memory_gb * prices.lambda_gb_second +
                             2 * prices.lambda_request + 2 * 3 * prices.s3_get +
                             p->total_seconds / 3600 * prices.master_hour;
  EXPECT_NEAR(p->dollars, star_priced + 10 * (7 * prices.s3_put + 11 * prices.s3_get), 1e-12);

  // Not with relays, nor on shared cores.
  scenario.storage_reduction = true;
  scenario.relays = 1;
  EXPECT_FALSE(Simulate(profile, platform, scenario, Prices{}).ok());
  scenario.relays = 0;
  EXPECT_FALSE(Simulate(profile, FreePlatform(2), scenario, Prices{}).ok());
}

TEST(Simulator, StragglersAndSharedSlowdown) {
  const Profile profile = FlatProfile();
  Platform platform = FreePlatform(0);
  platform.straggler_probability = 1;
  platform.straggler_slowdown = 3;
  Result<Prediction> p = Simulate(profile, platform, ScenarioOf(profile, 8), Prices{});
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->round_seconds, 3.0, 1e-12);
  // A worker twice as fast takes half the time.
  platform.straggler_probability = 0;
  platform.compute_speed = 2;
  p = Simulate(profile, platform, ScenarioOf(profile, 8), Prices{});
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->round_seconds, 0.5, 1e-12);
  // The side-by-side slowdown counts on shared cores only.
  Profile shared = FlatProfile();
  shared.points[0].shared_slowdown = 1.25;
  p = Simulate(shared, FreePlatform(0), ScenarioOf(shared, 1), Prices{});
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->round_seconds, 1.0, 1e-12);
  p = Simulate(shared, FreePlatform(4), ScenarioOf(shared, 1), Prices{});
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->round_seconds, 1.25, 1e-12);
}

TEST(Simulator, ImbalanceMakesTheSlowestWorkerThatMuchSlower) {
  Profile profile = FlatProfile();
  profile.points[0].imbalance = 1.2;
  profile.points[0].workers = 1;
  ProfilePoint second = profile.points[0];
  second.workers = 4;
  profile.points.push_back(second);
  // The slowest of 4 is 1.2 times the mean of 1 s, so rounds take 1.2 s on their own CPUs.
  Result<Prediction> p = Simulate(profile, FreePlatform(0), ScenarioOf(profile, 4), Prices{});
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->round_seconds, 1.2, 1e-12);
  EXPECT_NEAR(p->compute_share, 1.0 / 1.2, 1e-12);
}

TEST(Profile, InterpolatesInLogKAndExtrapolatesIterations) {
  Profile profile = FlatProfile();
  profile.points[0].iterations = 10;
  profile.points[0].data_passes = 1;
  ProfilePoint four = profile.points[0];
  four.workers = 4;
  four.iterations = 20;
  four.compute_seconds = 0.25;
  profile.points.push_back(four);
  const ProfilePoint two = profile.At(2);
  EXPECT_EQ(two.workers, 2);
  EXPECT_EQ(two.iterations, 15);
  EXPECT_NEAR(two.compute_seconds, 0.5, 1e-12);  // geometric, as work per worker halves with K
  // Beyond: iterations = 10 + 5 log2 K; work as the fitted model says (here all per nonzero:
  // a quarter of the shard at K = 16).
  profile.seconds_per_nnz = 1e-9;
  const ProfilePoint sixteen = profile.At(16);
  EXPECT_EQ(sixteen.iterations, 30);
  EXPECT_NEAR(sixteen.compute_seconds, 0.25 / 4, 1e-12);
  // The trend comes from the three largest K, and a falling one holds at the last count: a
  // K = 1 outlier (82 iterations, then 14, 16, 18) must not make K = 1024 converge at once.
  Profile outlier = FlatProfile();
  const int counts[][2] = {{1, 82}, {2, 14}, {4, 16}, {8, 18}};
  outlier.points.clear();
  for (const auto& [k, iterations] : counts) {
    ProfilePoint p = profile.points[0];
    p.workers = k;
    p.iterations = iterations;
    outlier.points.push_back(p);
  }
  EXPECT_EQ(outlier.At(64).iterations, 24);  // 14 + 2 (log2 64 - 1)
  ProfilePoint last = outlier.points.back();
  last.workers = 16;
  last.iterations = 10;  // falling
  outlier.points.push_back(last);
  EXPECT_EQ(outlier.At(64).iterations, 10);
  // Exact at a measured point, scaled by the model elsewhere: a shard of twice the nonzeros.
  EXPECT_NEAR(profile.WorkerRoundSeconds(profile.At(4), profile.nnz / 4.0, 100), 0.25, 1e-12);
  EXPECT_NEAR(profile.WorkerRoundSeconds(profile.At(4), profile.nnz / 2.0, 100), 0.5, 1e-12);
}

TEST(Profile, ACoordinateCostsMoreOnceTheModelOutgrowsTheCaches) {
  Profile profile = FlatProfile();  // cols = 100
  profile.seconds_per_coordinate = 1e-9;
  EXPECT_EQ(profile.CoordinateSeconds(1e6), 1e-9);  // no wide measurement: one cost
  profile.wide_cols = 10000;
  profile.seconds_per_coordinate_wide = 3e-9;
  EXPECT_EQ(profile.CoordinateSeconds(10), 1e-9);
  EXPECT_NEAR(profile.CoordinateSeconds(1000), 2e-9, 1e-21);  // halfway in log d
  EXPECT_EQ(profile.CoordinateSeconds(1e7), 3e-9);
}

TEST(Profile, JsonRoundTripAndErrorsThatNameTheField) {
  Profile profile = FlatProfile();
  profile.machine = "test cpu";
  profile.seconds_per_nnz = 1.5e-9;
  profile.message_latency_seconds = 4e-5;
  Result<Profile> back = Profile::FromJson(profile.ToJson(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->machine, "test cpu");
  EXPECT_EQ(back->seconds_per_nnz, 1.5e-9);
  EXPECT_EQ(back->message_latency_seconds, 4e-5);
  ASSERT_EQ(back->points.size(), 1u);
  EXPECT_EQ(back->points[0].iterations, 9);

  std::string text = profile.ToJson();
  text.replace(text.find("\"message_bandwidth\""), 3, "\"xx");
  Result<Profile> missing = Profile::FromJson(text, "p.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("p.json"), std::string::npos);
  EXPECT_NE(missing.status().message().find("message_bandwidth"), std::string::npos);
  EXPECT_FALSE(Profile::FromJson("[1, 2]", "p.json").ok());
  // A count written as a double beyond any integer is not a count (its cast would be undefined).
  std::string huge = profile.ToJson();
  const auto cores = huge.find("\"cores\":");
  huge.replace(cores, huge.find_first_of(",}", cores) - cores, "\"cores\":1e300");
  Result<Profile> refused = Profile::FromJson(huge, "p.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("cores"), std::string::npos) << refused.status().ToString();

  Profile unordered = FlatProfile();
  unordered.points.push_back(unordered.points[0]);  // workers 1 twice
  EXPECT_NE(unordered.Validate().message().find("ascending"), std::string::npos);
}

// A Newton profile at K = 1: 2 steps in 5 rounds, every worker round 1 s; each request
// carries one model-sized vector and each reply 1.5 on average (half the rounds evaluations,
// whose replies are a gradient and a diagonal).
Profile NewtonProfile() {
  Profile profile = FlatProfile();
  profile.algorithm = Algorithm::kNewton;
  profile.points[0].iterations = 2;
  profile.points[0].rounds = 5;
  profile.points[0].request_vectors = 1;
  profile.points[0].reply_vectors = 1.5;
  return profile;
}

TEST(Simulator, NewtonRoundsCarryTheProfilesVectorsAsWorkedOutByHand) {
  const Profile profile = NewtonProfile();
  Scenario scenario = ScenarioOf(profile, 2);
  scenario.cols = 20;  // a ROUND is 8 * 20 * 1 + 160 = 320 bytes, a REPLY 8 * 20 * 1.5 + 160 = 400
  Platform platform = FreePlatform(0);
  platform.latency_seconds = 0.1;
  platform.master_bandwidth = 160;  // on the master's link: 2 s a ROUND, 2.5 s a REPLY
  platform.worker_bandwidth = 80;   // end to end through the slower link: 4 s and 5 s
  // Out: arrivals 0 + 0.1 + 4 = 4.1 and 2 + 0.1 + 4 = 6.1; computed at 5.1 and 7.1.
  // Back: 5.1 + 0.1 + 5 = 10.2, and max(7.1 + 0.1 + 5, 10.2 + 2.5) = 12.7.
  Result<Prediction> p = Simulate(profile, platform, scenario, Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->iterations, 2);
  EXPECT_EQ(p->rounds, 5);  // the profile's rounds, not iterations + 1
  EXPECT_NEAR(p->round_seconds, 12.7, 1e-12);
  EXPECT_NEAR(p->solve_seconds, 5 * 12.7, 1e-9);
  EXPECT_EQ(p->bytes_per_round, 2 * (320 + 400));
  // Free messages: both back at 1.
  EXPECT_NEAR(p->communication_share, 1 - 1 / 12.7, 1e-12);

  // One worker on one shared core, its messages costing no CPU: the wire alone (2 s and 2.5 s
  // through equal links) brings the ROUND in at 2; computed by 3, its REPLY is in at 5.5.
  platform = FreePlatform(1);
  platform.master_bandwidth = platform.worker_bandwidth = 160;
  scenario.workers = 1;
  p = Simulate(profile, platform, scenario, Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NEAR(p->round_seconds, 5.5, 1e-12);
  EXPECT_EQ(p->bytes_per_round, 320 + 400);
}

TEST(Profile, NewtonRoundsStayFlatBeyondTheMeasuredK) {
  // Rounds measured at K = 1, 4, 16: 50, 46, 47 (5, 5, 6 steps); a worker's round is 1.5
  // passes over its shard at 1 ns per nonzero and nothing else.
  Profile profile = NewtonProfile();
  profile.nnz = 1600000;
  profile.seconds_per_nnz = 1e-9;
  const int measured[][3] = {{1, 50, 5}, {4, 46, 5}, {16, 47, 6}};
  profile.points.clear();
  for (const auto& [k, rounds, steps] : measured) {
    ProfilePoint p = NewtonProfile().points[0];
    p.workers = k;
    p.rounds = rounds;
    p.iterations = steps;
    p.data_passes = 1.5;
    p.compute_seconds = 1.5e-9 * 1600000 / k;  // exactly the model: 2.4 ms / K
    profile.points.push_back(p);
  }
  ASSERT_TRUE(profile.Validate().ok()) << profile.Validate().ToString();
  // Between measured K, halfway in log K: 48 at K = 2, 46.5 -> 47 at K = 8.
  EXPECT_EQ(profile.At(2).rounds, 48);
  EXPECT_EQ(profile.At(8).rounds, 47);
  // Beyond K = 16: its 47 rounds and 6 steps at every K (ADMM's iterations would follow the
  // trend of the last three points instead).
  for (const int k : {32, 64, 256}) {
    EXPECT_EQ(profile.At(k).rounds, 47) << k;
    EXPECT_EQ(profile.At(k).iterations, 6) << k;
  }
  // A round at K = 64 is a sixty-fourth of the data's 1.5 passes: 1.5 * 1.6e6 / 64 ns = 37.5 us,
  // on a CPU each, 47 of them (messages nearly free: 64 ROUNDs of 960 bytes at 1e18 bytes/s
  // add 6e-14 s a round).
  Scenario scenario = ScenarioOf(profile, 64);
  Result<Prediction> p = Simulate(profile, FreePlatform(0), scenario, Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->rounds, 47);
  EXPECT_NEAR(p->round_seconds, 37.5e-6, 1e-12);
  EXPECT_NEAR(p->solve_seconds, 47 * 37.5e-6, 1e-10);
  // Given steps run at the profile's rounds per step of that K: 12 steps * 47 / 6 = 94 rounds.
  scenario.iterations = 12;
  p = Simulate(profile, FreePlatform(0), scenario, Prices{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->rounds, 94);
  EXPECT_EQ(p->iterations, 12);
}

TEST(Profile, AProfileWrittenBeforeNewtonReadsAsAdmm) {
  // A profile as `nimbus simulate calibrate` wrote it before it knew Newton: no algorithm, no
  // vectors per message.
  const std::string old = R"({"machine": "old cpu", "date": "2026-11-30", "cores": 2, "data": "d.svm",
    "rows": 1000, "cols": 100, "nnz": 10000, "seconds_per_nnz": 0, "seconds_per_coordinate": 0,
    "seconds_per_coordinate_wide": 0, "wide_cols": 0, "seconds_per_round": 0,
    "master_seconds_per_reply_coordinate": 0, "master_seconds_per_coordinate": 0,
    "message_latency_seconds": 0, "message_bandwidth": 1e9, "process_start_seconds": 0,
    "process_spawn_seconds": 0, "shard_load_bandwidth": 1e9,
    "points": [{"workers": 1, "iterations": 9, "rounds": 10, "compute_seconds": 1, "imbalance": 1,
                "data_passes": 0, "local_iterations": 0, "cg_iterations": 0, "master_seconds": 0,
                "shared_slowdown": 1}]})";
  Result<Profile> profile = Profile::FromJson(old, "old.json");
  ASSERT_TRUE(profile.ok()) << profile.status().ToString();
  EXPECT_EQ(profile->algorithm, Algorithm::kAdmm);
  EXPECT_FALSE(profile->newton());
  EXPECT_EQ(profile->points[0].request_vectors, 1);
  EXPECT_EQ(profile->points[0].reply_vectors, 1);
  EXPECT_EQ(profile->points[0].local_fraction, 1);  // no support recorded: the whole model
  EXPECT_EQ(profile->points[0].spread, 0);          // its solves' spread unknown
  // ADMM's rounds: 9 iterations + 1 of 1 s each; a ROUND and a REPLY of d = 100 doubles.
  Result<Prediction> p = Simulate(*profile, FreePlatform(0), ScenarioOf(*profile, 2), Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->rounds, 10);
  EXPECT_NEAR(p->solve_seconds, 10.0, 1e-9);
  EXPECT_EQ(p->bytes_per_round, static_cast<int64_t>(2 * 2 * kMessageBytes));
}

TEST(Profile, NewtonFieldsRoundTripAndBadOnesAreNamed) {
  Profile profile = NewtonProfile();
  profile.points[0].cg_steps = 3;
  Result<Profile> back = Profile::FromJson(profile.ToJson(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->algorithm, Algorithm::kNewton);
  EXPECT_EQ(back->points[0].rounds, 5);
  EXPECT_EQ(back->points[0].reply_vectors, 1.5);
  EXPECT_EQ(back->points[0].cg_steps, 3);

  auto refused = [](std::string text, const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
    return Profile::FromJson(text, "p.json").status().message();
  };
  const std::string text = profile.ToJson();
  const std::string unknown = refused(text, "\"algorithm\": \"newton\"", "\"algorithm\": \"lbfgs\"");
  EXPECT_NE(unknown.find("p.json"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("lbfgs"), std::string::npos) << unknown;
  EXPECT_NE(refused(text, "\"algorithm\": \"newton\"", "\"algorithm\": 2").find("algorithm"), std::string::npos);
  // A message carries a vector, if only a few of its entries (as float32 or as its nonzeros).
  EXPECT_NE(refused(text, "\"reply_vectors\": 1.5", "\"reply_vectors\": 0").find("reply_vectors"),
            std::string::npos);
  std::string lean = text;
  const std::string doubles = "\"reply_vectors\": 1.5";
  lean.replace(lean.find(doubles), doubles.size(), "\"reply_vectors\": 0.05");
  EXPECT_TRUE(Profile::FromJson(lean, "p.json").ok());
  EXPECT_NE(refused(text, "\"request_vectors\": 1.0", "\"request_vectors\": \"one\"").find("request_vectors"),
            std::string::npos);
}

TEST(Profile, TheSolvesSpreadRoundTripsAndANegativeOneIsNamed) {
  Profile profile = NewtonProfile();
  profile.points[0].spread = 0.375;
  Result<Profile> back = Profile::FromJson(profile.ToJson(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->points[0].spread, 0.375);
  for (const double spread : {-0.1, std::numeric_limits<double>::infinity()}) {
    Profile wrong = profile;
    wrong.points[0].spread = spread;
    EXPECT_NE(wrong.Validate().message().find("spread"), std::string::npos) << spread;
  }
  // At a measured K, that K's own; between two, mixed in log K as the other figures are.
  Profile two = FlatProfile();
  two.points[0].spread = 0.1;
  ProfilePoint four = two.points[0];
  four.workers = 4;
  four.spread = 0.5;
  two.points.push_back(four);
  EXPECT_NEAR(two.At(1).spread, 0.1, 1e-12);
  EXPECT_NEAR(two.At(4).spread, 0.5, 1e-12);
  EXPECT_NEAR(two.At(2).spread, 0.3, 1e-12);
}

// General-form points at K = 1 and 4 (s = nnz / (K d) = 100 and 25 nonzeros per coordinate)
// holding 80% and 40% of the model: in log-log a slope of log 2 / log 4 = 1/2.
Profile GeneralFormProfile() {
  Profile profile = FlatProfile();  // 10000 nonzeros, d = 100
  profile.points[0].local_fraction = 0.8;
  ProfilePoint four = profile.points[0];
  four.workers = 4;
  four.local_fraction = 0.4;
  profile.points.push_back(four);
  return profile;
}

TEST(Profile, AWorkersShareOfTheModelFollowsItsNonzerosPerCoordinate) {
  const Profile profile = GeneralFormProfile();
  ASSERT_TRUE(profile.Validate().ok()) << profile.Validate().ToString();
  EXPECT_NEAR(profile.LocalFraction(10000, 100), 0.8, 1e-12);  // the measured points
  EXPECT_NEAR(profile.LocalFraction(2500, 100), 0.4, 1e-12);
  EXPECT_NEAR(profile.LocalFraction(5000, 100), 0.8 / std::sqrt(2.0), 1e-12);  // between: s^(1/2)
  EXPECT_NEAR(profile.LocalFraction(625, 100), 0.2, 1e-12);                    // K = 16, on the trend
  // Ten times the rows at ten times K, or ten times the rows and the features at the same K,
  // is the calibration's shard at K = 4: as many nonzeros per coordinate.
  EXPECT_NEAR(profile.LocalFraction(100000.0 / 40, 100), 0.4, 1e-12);
  EXPECT_NEAR(profile.LocalFraction(100000.0 / 4, 1000), 0.4, 1e-12);
  // Never more than the whole model, or than one coordinate per nonzero (and the intercept).
  EXPECT_EQ(profile.LocalFraction(1e7, 100), 1.0);
  Profile flat = profile;
  flat.points[1].local_fraction = 0.79;  // a nearly flat trend would hold 0.7 at s = 0.01
  EXPECT_NEAR(flat.LocalFraction(1, 100), 2.0 / 100, 1e-12);
  // A trend steeper than the nonzeros themselves is noise: held at slope 1.
  Profile steep = profile;
  steep.points[1].local_fraction = 0.1;  // 0.8 to 0.1 over a factor 4 in s
  EXPECT_NEAR(steep.LocalFraction(2500.0 / 4, 100), 0.1 / 4, 1e-12);
  // In the dense form every worker holds the whole model at every K.
  EXPECT_EQ(FlatProfile().LocalFraction(1, 100), 1.0);
  for (const double fraction : {0.0, 1.5}) {
    Profile wrong = FlatProfile();
    wrong.points[0].local_fraction = fraction;
    EXPECT_NE(wrong.Validate().message().find("local_fraction"), std::string::npos) << fraction;
  }
  Result<Profile> back = Profile::FromJson(profile.ToJson(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->points[1].local_fraction, 0.4);
}

TEST(Simulator, GeneralFormMessagesAndTheMastersSumsAreAWorkersShareOfTheModel) {
  Profile profile = GeneralFormProfile();
  profile.master_seconds_per_reply_coordinate = 0.01;  // 0.4 s per reply of 40 coordinates
  profile.master_seconds_per_coordinate = 0.002;       // 0.2 s for the update over all 100
  Platform platform = FreePlatform(0);
  const double message = 8 * 40 + 160;  // a ROUND or REPLY of 40 doubles: 480 bytes
  platform.master_bandwidth = platform.worker_bandwidth = message;  // 1 s each
  // K = 4, 1 s compute: ROUNDs arrive at 1, 2, 3, 4 and are computed by 2, 3, 4, 5; REPLYs in
  // at 3, 4, 5, 6 (each waits for none: the link frees as the next is ready), the master adds
  // each in 0.4 s (to 6.4), then updates z: 6.6.
  Result<Prediction> p = Simulate(profile, platform, ScenarioOf(profile, 4), Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NEAR(p->round_seconds, 6.6, 1e-12);
  EXPECT_EQ(p->bytes_per_round, static_cast<int64_t>(4 * 2 * message));
  EXPECT_NEAR(p->master_share, (4 * 0.4 + 0.2) / 6.6, 1e-12);
}

TEST(Simulator, AMulticlassModelsVectorsCarryEveryClassesWeights) {
  Profile profile = GeneralFormProfile();
  profile.blocks = 10;  // ten classes: 1000 weights over the 100 features
  profile.master_seconds_per_reply_coordinate = 0.001;  // 0.4 s per reply of 400 weights
  profile.master_seconds_per_coordinate = 0.0002;       // 0.2 s for the update over all 1000
  Platform platform = FreePlatform(0);
  const double message = 8 * 400 + 160;  // a worker's 40 features' 400 weights: 3360 bytes
  platform.master_bandwidth = platform.worker_bandwidth = message;  // 1 s each
  // The same round as the binary one above, worked out the same way: 6.6 s.
  Result<Prediction> p = Simulate(profile, platform, ScenarioOf(profile, 4), Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_NEAR(p->round_seconds, 6.6, 1e-12);
  EXPECT_EQ(p->bytes_per_round, static_cast<int64_t>(4 * 2 * message));
  // The cache threshold of a coordinate's cost is the calibration's 1000 weights, not its 100
  // features.
  profile.seconds_per_coordinate = 1e-9;
  profile.seconds_per_coordinate_wide = 3e-9;
  profile.wide_cols = 100000;
  EXPECT_EQ(profile.CoordinateSeconds(1000), 1e-9);
  EXPECT_NEAR(profile.CoordinateSeconds(10000), 2e-9, 1e-21);
  Result<Profile> back = Profile::FromJson(profile.ToJson(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->blocks, 10);
  profile.blocks = 0;
  EXPECT_NE(profile.Validate().message().find("blocks"), std::string::npos);
}

// The column method's: a block of columns a worker, its messages the block's weights and the
// rows' derivatives out, its step and the rows' change of the margins back.
Profile ColumnProfile() {
  Profile profile = FlatProfile();
  profile.algorithm = Algorithm::kColumns;
  profile.points[0].iterations = 9;
  profile.points[0].rounds = 10;
  profile.points[0].request_vectors = 1;
  profile.points[0].reply_vectors = 0.5;
  profile.points[0].request_row_vectors = 2;
  profile.points[0].reply_row_vectors = 1;
  return profile;
}

TEST(Simulator, ColumnMessagesFollowTheRowsAndTheMastersWorkIsPerRow) {
  Profile profile = ColumnProfile();
  profile.master_seconds_per_reply_row = 1e-4;  // 0.1 s per reply of 1000 rows
  profile.master_seconds_per_row = 2e-4;        // 0.2 s for the line search over them
  Scenario scenario = ScenarioOf(profile, 4);
  // A worker holds 100 / 4 = 25 weights: a ROUND of 8 (25 + 2 * 1000) + 160 = 16360 bytes, a
  // REPLY of 8 (12.5 + 1000) + 160 = 8260.
  const double request = 8 * (25 + 2000) + 160, reply = 8 * (12.5 + 1000) + 160;
  Platform platform = FreePlatform(0);
  platform.master_bandwidth = platform.worker_bandwidth = request;  // 1 s a ROUND
  // Out at 1, 2, 3, 4; computed by 2, 3, 4, 5; each REPLY (8260 / 16360 s) in as its worker is
  // done, then 0.1 s to add; the last in at 5 + r, added by 5 + r + 0.1, and 0.2 s more.
  Result<Prediction> p = Simulate(profile, platform, scenario, Prices{});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->rounds, 10);  // the profile's, iterations + 1 here
  EXPECT_NEAR(p->round_seconds, 5 + reply / request + 0.1 + 0.2, 1e-12);
  EXPECT_EQ(p->bytes_per_round, static_cast<int64_t>(4 * (request + reply)));
  // Twice the rows: twice the rows' bytes and the master's work per row.
  scenario.rows = 2000;
  scenario.nnz = 20000;
  Result<Prediction> taller = Simulate(profile, FreePlatform(0), scenario, Prices{});
  ASSERT_TRUE(taller.ok()) << taller.status().ToString();
  EXPECT_EQ(taller->bytes_per_round, static_cast<int64_t>(4 * (8 * (25 + 4000) + 160 + 8 * (12.5 + 2000) + 160)));
  EXPECT_NEAR(taller->master_share * taller->round_seconds, 4 * 0.2 + 0.4, 1e-12);
  // Under L1 half the replies carry a second row vector (A_b z, the zeroed weights' change of
  // the margins): 1.5 of them, in bytes and in the master's sums.
  profile.points[0].reply_row_vectors = 1.5;
  Result<Prediction> zeroing = Simulate(profile, FreePlatform(0), scenario, Prices{});
  ASSERT_TRUE(zeroing.ok()) << zeroing.status().ToString();
  EXPECT_EQ(zeroing->bytes_per_round, static_cast<int64_t>(4 * (8 * (25 + 4000) + 160 + 8 * (12.5 + 3000) + 160)));
  EXPECT_NEAR(zeroing->master_share * zeroing->round_seconds, 4 * 0.3 + 0.4, 1e-12);
  profile.points[0].reply_row_vectors = 1;
  // Replies are each block's own: no relays, no storage reduction.
  scenario.relays = 2;
  EXPECT_NE(Simulate(profile, FreePlatform(0), scenario, Prices{}).status().message().find("column method"),
            std::string::npos);
}

TEST(Profile, ColumnRoundsGrowInLogKAndAWorkerHoldsItsBlock) {
  // Iterations measured at K = 1 and 4: 10 and 30 (one round more each). A worker's round: 2
  // passes over its block at 1 ns per nonzero, a coordinate descent pass over its 100 / K
  // weights at 10 ns each, and 1 ns per row.
  Profile profile = ColumnProfile();
  profile.nnz = 1000000;
  profile.seconds_per_nnz = 1e-9;
  profile.seconds_per_coordinate = profile.seconds_per_coordinate_wide = 1e-8;
  profile.seconds_per_row = 1e-9;
  auto point = [](int k, int iterations) {
    ProfilePoint p = ColumnProfile().points[0];
    p.workers = k;
    p.iterations = iterations;
    p.rounds = iterations + 1;
    p.data_passes = 2;
    p.local_iterations = 1;
    p.local_fraction = 1.0 / k;
    p.compute_seconds = 2e-9 * 1e6 / k + 1e-8 * 100.0 / k + 1e-9 * 1000;
    return p;
  };
  profile.points = {point(1, 10), point(4, 30)};
  ASSERT_TRUE(profile.Validate().ok()) << profile.Validate().ToString();
  const ProfilePoint at16 = profile.At(16);
  EXPECT_EQ(at16.iterations, 50);  // 10 + 10 log2 K
  EXPECT_EQ(at16.rounds, 51);
  EXPECT_EQ(profile.At(2).rounds, 21);  // between: mixed in log K
  EXPECT_NEAR(profile.LocalSize(at16, 1e6 / 16, 100), 100.0 / 16, 1e-12);
  EXPECT_NEAR(at16.compute_seconds, 2e-9 * 1e6 / 16 + 1e-8 * 100 / 16 + 1e-6, 1e-15);
  // A problem of 3000 rows: the rows' part three times as long.
  EXPECT_NEAR(profile.WorkerRoundSeconds(at16, 1e6 / 16, 100, 3000), 2e-9 * 1e6 / 16 + 1e-8 * 100 / 16 + 3e-6,
              1e-15);
  Scenario scenario = ScenarioOf(profile, 16);
  scenario.iterations = 20;
  Result<Prediction> fixed = Simulate(profile, FreePlatform(0), scenario, Prices{});
  ASSERT_TRUE(fixed.ok()) << fixed.status().ToString();
  EXPECT_EQ(fixed->rounds, 21);
  // Its fields round-trip; fewer rounds than iterations, or negative row vectors, are named.
  Result<Profile> back = Profile::FromJson(profile.ToJson(), "p.json");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->columns());
  EXPECT_EQ(back->points[1].request_row_vectors, 2);
  EXPECT_EQ(back->seconds_per_row, 1e-9);
  profile.points[0].rounds = 9;
  EXPECT_NE(profile.Validate().message().find("rounds must be >= iterations"), std::string::npos);
  profile.points[0].rounds = 11;
  profile.points[0].reply_row_vectors = -1;
  EXPECT_FALSE(profile.Validate().ok());
}

TEST(Platform, DefaultsAreValidAndBadFiguresAreRefused) {
  EXPECT_TRUE(Platform::Lambda().Validate().ok());
  EXPECT_TRUE(Platform::Local(FlatProfile()).Validate().ok());
  EXPECT_EQ(Platform::Local(FlatProfile()).cores, 2);
  Platform bad = Platform::Lambda();
  bad.straggler_probability = 1.5;
  EXPECT_FALSE(bad.Validate().ok());
  bad = Platform::Lambda();
  bad.worker_bandwidth = 0;
  EXPECT_FALSE(bad.Validate().ok());
  const Profile profile = FlatProfile();
  Scenario too_many = ScenarioOf(profile, 2000);  // more workers than rows
  EXPECT_FALSE(Simulate(profile, Platform::Lambda(), too_many, Prices{}).ok());
}

}  // namespace
}  // namespace nimbus
