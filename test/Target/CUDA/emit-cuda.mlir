// RUN: loom-translate --emit-cuda %s --split-input-file | FileCheck %s

// Every rank runs one step function with the host steps' signature: it
// reads the rank's mesh coordinates from the communicator, takes the
// process's CUDA session, uploads the arguments into its workspace (none is
// carried here), and turns every op (after its comment) into a kernel
// launch, a cuBLAS GEMM or an NCCL call; `dist.axis_index` and the block
// offset are run-time expressions of the coordinates.

dist.mesh @m shape [2, 2] axes ["dp", "tp"]
func.func @train_step(
    %x: tensor<2x8xf32> {dist.layout = #dist.layout<@m, [["dp"], []]>},
    %w: tensor<8x4xf32> {dist.layout = #dist.layout<@m, [[], ["tp"]]>},
    %table: tensor<16x8xf32> {dist.layout = #dist.layout<@m, [["tp"], []]>},
    %ids: tensor<3xi64>)
    -> (tensor<2x8xf32> {dist.layout = #dist.layout<@m, [["dp"], []]>},
        tensor<3x8xf32>) {
  %y = loom.matmul %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32> loc("model.py":12:3)
  %g = dist.all_gather %y on @m axes ["tp"] dim 1 : tensor<2x4xf32> -> tensor<2x8xf32>
  %i = dist.axis_index @m "tp" : index
  %c16 = arith.constant 16 : index
  %offset = arith.muli %i, %c16 : index
  %e = loom.embedding %table, %ids offset %offset : (tensor<16x8xf32>, tensor<3xi64>, index) -> tensor<3x8xf32>
  %s = dist.all_reduce sum %e on @m axes ["tp"] : tensor<3x8xf32>
  return %g, %s : tensor<2x8xf32>, tensor<3x8xf32>
}

// CHECK: #include "loom/Runtime/CUDA/Session.h"
// CHECK: #include "loom/Runtime/NCCL/Communicator.h"
// CHECK-LABEL: /// The step of every rank of mesh @m {dp:2, tp:2}.
// CHECK-NEXT: template <typename T>
// CHECK-NEXT: Status loom_train_step(mpi::Communicator &comm
// CHECK: const int64_t loomRank = comm.getRank();
// CHECK: cuda::Session &session = cuda::Session::get(comm);
// CHECK: nccl::Communicator &nccl = session.getNccl();
// CHECK: cuda::Workspace ws(stream);
// CHECK-NEXT: ws.openArena(kArenaBytes_train_step[0][sizeof(T) == 8]);
// CHECK-NEXT: loom::runtime::stepMemory().predictedPeakBytes = kArenaPredictedPeak_train_step[0];
// CHECK: const T *arg0 = ws.upload(args[0].floats); // arg0
// CHECK: const int64_t *arg3 = ws.upload(args[3].ints); // arg3
// CHECK: // %[[Y:[0-9]+]] = loom.matmul %arg0, %arg1 : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32> loc("model.py":12:3)
// CHECK-NEXT: T *v[[Y]] = ws.at<T>(kArenaOffsets_train_step[0][sizeof(T) == 8], 8);
// CHECK-NEXT: cuda::matmul<T>(blas, arg0, {2, 8}, arg1, {8, 4}, false, false, v[[Y]]);
// CHECK: // %[[G:[0-9]+]] = dist.all_gather %[[Y]] on @m axes ["tp"] dim 1
// CHECK-NEXT: // group over {"tp"}: the ranks that differ from this one only on those axes
// CHECK-NEXT: T *v[[G]] = ws.at<T>(kArenaOffsets_train_step[1][sizeof(T) == 8], 16);
// CHECK-NEXT: LOOM_CHECK(nccl.allGather(v[[Y]], {2, 4}, {"tp"}, 1, v[[G]]), "`dist.all_gather` at
// CHECK: const int64_t v[[I:[0-9]+]] = loomCoords[1];
// CHECK: const int64_t v_c16 = 16;
// CHECK: const int64_t v[[OFF:[0-9]+]] = v[[I]] * v_c16;
// CHECK: cuda::embeddingBlock<T>(stream, arg2, {16, 8}, arg3, {3}, v[[OFF]], v{{[0-9]+}});
// CHECK: nccl.allReduce(v{{[0-9]+}}, {3, 8}, {"tp"}, nccl::ReduceKind::Sum, v{{[0-9]+}})
// CHECK: if (Status status = session.finish(kOps, 0); !status)
// CHECK-NEXT: return Status::failure("rank " + std::to_string(loomRank) + ": " +
// CHECK: ws.download(results[0].floats, v[[G]], 16);
// CHECK-NEXT: ws.download(results[1].floats, v{{[0-9]+}}, 24);
// CHECK-NOT: keepResident
// CHECK-NEXT: return Status::success();

// CHECK-NEXT: }
// The static memory plan: the matmul's result and the embedding's share
// offset 0 (the first is dead when the second is computed, 32 and 96 bytes
// at 64-byte alignment); the two results are blocks of their own.
// CHECK: const int64_t kArenaOffsets_train_step[][2] = {
// CHECK-NEXT: {0, 0}, {-1, -1}, {0, 0}, {-1, -1},
// CHECK-NEXT: };
// CHECK-NEXT: const int64_t kArenaBytes_train_step[][2] = {{[{][{]}}128, 192}, };
// CHECK-NEXT: // The most bytes of those buffers live at once, per stage: {128, 192}
// CHECK-NEXT: const int64_t kArenaPredictedPeak_train_step[] = {760, };
// CHECK-NOT: Status loom_

// The harness's spec is the host emitter's (shared code).
// CHECK-LABEL: const ProgramSpec &loomProgramSpec() {
// CHECK: s.mesh = {{[{][{]}}"dp", 2}, {"tp", 2}};
// CHECK: {"arg1", false, io::DType::F32, {8, 8}, {8, 4}, Init::None, {0.0, 0.0}, "{{\[\[}}], [\"tp\"]]"},
// CHECK-NOT: Placements
// CHECK: StepFn<double> loomStepF64() {
// CHECK: return &loom_train_step<double>;

// -----

// Ops that can fail on data record errors under their position in the step;
// the step names them when it finishes. Reshape names the same device
// buffer, a constant is built from host values in the run's type and
// uploaded once (the session keeps it), and the AdamW step counter stays on
// the device.

func.func @train_step(%x: tensor<2x3xf64>, %ids: tensor<4xi64>,
                      %table: tensor<5x3xf64>, %labels: tensor<2xi64>,
                      %g: tensor<2x3xf64>, %m: tensor<2x3xf64>,
                      %v: tensor<2x3xf64>, %step: tensor<i64>)
    -> (tensor<6xf64>, tensor<4x3xf64>, tensor<f64>, tensor<2x3xf64>) {
  %r = loom.reshape %x : tensor<2x3xf64> to tensor<6xf64>
  %c = arith.constant dense<2.5> : tensor<6xf64>
  %y = loom.mul %r, %c : (tensor<6xf64>, tensor<6xf64>) -> tensor<6xf64>
  %e = loom.embedding %table, %ids : (tensor<5x3xf64>, tensor<4xi64>) -> tensor<4x3xf64>
  %l = loom.cross_entropy %x, %labels : (tensor<2x3xf64>, tensor<2xi64>) -> tensor<f64>
  %p, %m2, %v2 = loom.adamw_update %x, %g, %m, %v, %step {lr = 1.0e-3, beta1 = 0.9, beta2 = 0.999, eps = 1.0e-8, weight_decay = 0.1} : (tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<i64>) -> (tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>)
  return %y, %e, %l, %p : tensor<6xf64>, tensor<4x3xf64>, tensor<f64>, tensor<2x3xf64>
}

// CHECK-LABEL: /// The step of every rank.
// CHECK: const T *v0 = arg0;
// CHECK: const std::vector<T> v_cst_host(6, static_cast<T>(2.5));
// CHECK-NEXT: const T *v_cst = session.constant(&stepKey, 0, ws, v_cst_host);
// CHECK: cuda::binary<T>(stream, cuda::BinaryKind::Mul, v0, {6}, v_cst, {6}, v1, {6});
// CHECK: cuda::embedding<T>(stream, arg2, {5, 3}, arg1, {4}, v2, session.errors(1));
// CHECK: cuda::crossEntropyLocal<T>(stream, arg0, {2, 3}, arg3, -100, nullptr, false, v3, session.errors(2));
// CHECK: cuda::adamwUpdate<T, int64_t>(stream, arg0, arg4, arg5, arg6, {2, 3}, arg7, 0.001,
// CHECK: static const char *const kOps[] = {
// CHECK-NEXT: "`loom.embedding` at
// CHECK-NEXT: "`loom.cross_entropy` at
// CHECK-NEXT: };
// CHECK-NEXT: if (Status status = session.finish(kOps, 2); !status)
// CHECK-NOT: Status loom_
// CHECK: s.mesh = {};

// -----

// A dropout draws by global index: each rank computes its block's place in
// the global tensor from the op's layout at run time and passes it with the
// step's run seed and RNG step, so the device mask equals the host's.

dist.mesh @m shape [2] axes ["tp"]
func.func @train_step(
    %x: tensor<4x3xf32> {dist.layout = #dist.layout<@m, [[], ["tp"]]>})
    -> (tensor<4x3xf32> {dist.layout = #dist.layout<@m, [[], ["tp"]]>}) {
  %y = loom.dropout %x {rate = 5.000000e-01 : f64, seed = 17 : i64, dist.layout = #dist.layout<@m, [[], ["tp"]]>} : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// CHECK: #include "loom/Runtime/CUDA/Random.h"
// CHECK-LABEL: /// The step of every rank of mesh @m {tp:2}.
// CHECK: Status loom_train_step(mpi::Communicator &comm, const StepContext &context,
// CHECK: Shape v0_offset;
// CHECK-NEXT: LOOM_CHECK(blockOffset(comm.getMesh(), loomRank, "{{\[\[}}], [\"tp\"]]", {4, 6}, v0_offset), "`loom.dropout` at
// CHECK: cuda::dropout<T>(stream, arg0, {4, 6}, v0_offset, {4, 3}, 0.5, 17, context.seed, context.step, v0);

// -----

// The model state stays on the device between steps: a carried argument (a
// result named like it: `w`, `w.exp_avg`, `step`, and `frozen`, returned
// unchanged) comes from the session's resident copy when the context allows,
// the batch (`x`) is uploaded every step; the carried results become the
// resident copies and go to the host only when the context asks, while the
// loss always does.

func.func @train_step(
    %w: tensor<4xf32> {loom.param = #loom.param<"w", init = normal(0.5), decay = false>},
    %x: tensor<4xf32>,
    %m: tensor<4xf32> {loom.name = "w.exp_avg"},
    %frozen: tensor<4xf32> {loom.name = "frozen"},
    %step: tensor<i64> {loom.name = "step"})
    -> (tensor<f32> {loom.name = "loss"},
        tensor<4xf32> {loom.name = "w"},
        tensor<4xf32> {loom.name = "w.exp_avg"},
        tensor<4xf32> {loom.name = "frozen"},
        tensor<i64> {loom.name = "step"}) {
  %g = loom.mul %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = loom.reduce_sum %g {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  %m2 = loom.add %m, %g : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w2 = loom.sub %w, %m2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %one = arith.constant dense<1> : tensor<i64>
  %s2 = loom.add %step, %one : (tensor<i64>, tensor<i64>) -> tensor<i64>
  return %l, %w2, %m2, %frozen, %s2 : tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>
}

// CHECK-LABEL: /// The step of every rank.
// CHECK: static char stepKey;
// CHECK: const T *arg0 = session.carriedArgument(&stepKey, 0, context.carriedAreLastResults, ws,
// CHECK-NEXT: args[0].floats, 4); // w
// CHECK-NEXT: const T *arg1 = ws.upload(args[1].floats); // arg1
// CHECK-NEXT: const T *arg2 = session.carriedArgument(&stepKey, 2, context.carriedAreLastResults, ws,
// CHECK-NEXT: args[2].floats, 4); // w.exp_avg
// CHECK-NEXT: const T *arg3 = session.carriedArgument(&stepKey, 3, context.carriedAreLastResults, ws,
// CHECK-NEXT: args[3].floats, 4); // frozen
// CHECK-NEXT: const int64_t *arg4 = session.carriedArgument(&stepKey, 4, context.carriedAreLastResults, ws,
// CHECK-NEXT: args[4].ints, 1); // step
// CHECK: const int64_t *v_cst = session.constant(&stepKey, 0, ws, v_cst_host);
// CHECK: if (Status status = session.finish(kOps, 0); !status)
// CHECK-NEXT: return Status::failure("rank " + std::to_string(loomRank) + ": " +
// CHECK-NEXT: status.message());
// CHECK-NEXT: ws.download(results[0].floats, v[[L:[0-9]+]], 1);
// CHECK-NEXT: // The carried results become
// CHECK: session.keepResident(&stepKey, ws, {
// CHECK-NEXT: {0, v[[W:[0-9]+]], 4 * int64_t(sizeof(T))}, // w
// CHECK-NEXT: {2, v[[M:[0-9]+]], 4 * int64_t(sizeof(T))}, // w.exp_avg
// CHECK-NEXT: {3, arg3, 4 * int64_t(sizeof(T))}, // frozen
// CHECK-NEXT: {4, v[[S:[0-9]+]], 1 * int64_t(sizeof(int64_t))}, // step
// CHECK-NEXT: });
// CHECK-NEXT: if (context.hostNeedsCarried) {
// CHECK-NEXT: ws.download(results[1].floats, v[[W]], 4);
// CHECK-NEXT: ws.download(results[2].floats, v[[M]], 4);
// CHECK-NEXT: ws.download(results[3].floats, arg3, 4);
// CHECK-NEXT: ws.download(results[4].ints, v[[S]], 1);
// CHECK-NEXT: }
// CHECK-NEXT: return Status::success();
// CHECK-LABEL: const ProgramSpec &loomProgramSpec() {
// CHECK: s.carried = {{[{][{]}}1, 0}, {2, 2}, {3, 3}, {4, 4}};

// -----

// A carried value computed after the last read of its argument (as ZeRO's
// gathered parameters are) takes the argument's device buffer, zeroed on
// the stream first (the in-place rule, dist::InPlaceReuse), and that buffer
// becomes the argument's resident copy; `u`, computed while its argument
// is still read, gets a block of its own, as every other returned value.

func.func @train_step(%p: tensor<4xf32> {loom.name = "w"}, %q: tensor<4xf32> {loom.name = "u"})
    -> (tensor<4xf32> {loom.name = "w"}, tensor<4xf32> {loom.name = "u"}) {
  %d = loom.mul %p, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = loom.add %d, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w = loom.add %d, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %w, %u : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: /// The step of every rank.
// CHECK: T *v0 = ws.at<T>(kArenaOffsets_train_step[0][sizeof(T) == 8], 4);
// CHECK: T *v1 = ws.at<T>(kArenaOffsets_train_step[1][sizeof(T) == 8], 4);
// CHECK: // In the place of arg0, which no op reads from here on.
// CHECK-NEXT: T *v2 = ws.reuse(arg0, 4);
// CHECK: session.keepResident(&stepKey, ws, {
// CHECK-NEXT: {0, v2, 4 * int64_t(sizeof(T))}, // w
// CHECK-NEXT: {1, v1, 4 * int64_t(sizeof(T))}, // u
// CHECK-NEXT: });
// CHECK: const int64_t kArenaOffsets_train_step[][2] = {
// CHECK-NEXT: {0, 0}, {-1, -1},
// CHECK-NEXT: };
