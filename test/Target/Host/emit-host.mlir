// RUN: loom-translate --emit-host %s --split-input-file | FileCheck %s

// One function for every rank: the rank and its mesh coordinates are read
// from the communicator, `dist.axis_index` and the index arithmetic of a
// block offset are run-time expressions of them, every op comes after its
// comment (with its location), a kernel call per loom op and a Communicator
// call per collective (its comment names the group's axes). Nothing is
// printed per rank.

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

// CHECK-LABEL: /// The step of every rank of mesh @m {dp:2, tp:2}.
// CHECK-NEXT: template <typename T>
// CHECK-NEXT: Status loom_train_step(mpi::Communicator &comm
// CHECK: const int64_t loomRank = comm.getRank();
// CHECK-NEXT: const std::vector<int64_t> &loomCoords = comm.getCoordinates();
// CHECK: host::Workspace ws(kArenaBytes_train_step[0][sizeof(T) == 8],
// CHECK-NEXT: kArenaPredictedPeak_train_step[0]);
// CHECK-NEXT: ws.countArguments(args);
// CHECK: const T *arg0 = args[0].floats.data(); // arg0
// CHECK: const int64_t *arg3 = args[3].ints.data(); // arg3
// A value the step computes lives in the arena, at its planned offset.
// CHECK: // %[[Y:[0-9]+]] = loom.matmul %arg0, %arg1 : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32> loc("model.py":12:3)
// CHECK-NEXT: T *v[[Y]] = ws.at<T>(kArenaOffsets_train_step[0][sizeof(T) == 8], 8);
// CHECK-NEXT: host::matmul<T>(arg0, {2, 8}, arg1, {8, 4}, false, false, v[[Y]]);
// A value the step returns is computed in the caller's result buffer.
// CHECK: // %[[G:[0-9]+]] = dist.all_gather %[[Y]] on @m axes ["tp"] dim 1
// CHECK-NEXT: // group over {"tp"}: the ranks that differ from this one only on those axes
// CHECK-NEXT: T *v[[G]] = ws.result(results[0].floats, 16);
// CHECK-NEXT: LOOM_CHECK(comm.allGather(v[[Y]], {2, 4}, {"tp"}, 1, v[[G]]), "`dist.all_gather` at
// The coordinate on "tp" (axis 1) times the block's rows.
// CHECK: const int64_t v[[I:[0-9]+]] = loomCoords[1];
// CHECK: const int64_t v_c16 = 16;
// CHECK: const int64_t v[[OFF:[0-9]+]] = v[[I]] * v_c16;
// CHECK: LOOM_CHECK(host::embeddingBlock<T>(arg2, {16, 8}, arg3, {3}, v[[OFF]], v{{[0-9]+}}), "`loom.embedding` at
// CHECK: T *v{{[0-9]+}} = ws.result(results[1].floats, 24);
// CHECK-NEXT: comm.allReduce(v{{[0-9]+}}, {3, 8}, {"tp"}, mpi::ReduceKind::Sum, v{{[0-9]+}})
// CHECK-NEXT: {{^$}}
// CHECK-NEXT: // func.return
// CHECK-NEXT: return Status::success();
// CHECK-NEXT: }
// The plan: the matmul's and the embedding's results share no byte (the
// first is read by the gather, which runs before the embedding: both start
// at 0), 64-byte aligned; the arena is the larger of the two.
// CHECK: const int64_t kArenaOffsets_train_step[][2] = {
// CHECK-NEXT: {0, 0}, {0, 0},
// CHECK-NEXT: };
// CHECK-NEXT: const int64_t kArenaBytes_train_step[][2] = {{[{][{]}}128, 192}, };
// CHECK-NOT: Status loom_
// A failed call names the rank at run time.
// CHECK-NOT: "rank

// The spec gives the harness every tensor's global shape and layout, from
// which it computes each rank's block (harness::Placements): no per-rank
// table.
// CHECK-LABEL: const ProgramSpec &loomProgramSpec() {
// CHECK: s.mesh = {{[{][{]}}"dp", 2}, {"tp", 2}};
// CHECK: {"arg0", false, io::DType::F32, {4, 8}, {2, 8}, Init::None, {0.0, 0.0}, "{{\[\[}}\"dp\"], []]"},
// CHECK: {"arg1", false, io::DType::F32, {8, 8}, {8, 4}, Init::None, {0.0, 0.0}, "{{\[\[}}], [\"tp\"]]"},
// CHECK: {"arg2", false, io::DType::F32, {32, 8}, {16, 8}, Init::None, {0.0, 0.0}, "{{\[\[}}\"tp\"], []]"},
// CHECK: {"arg3", true, io::DType::I64, {3}, {3},
// CHECK-NOT: Placements
// CHECK: s.carried = {};
// A build may leave a precision out (LOOM_STEP_DTYPES).
// CHECK: StepFn<float> loomStepF32() {
// CHECK-NEXT: #ifndef LOOM_STEP_NO_F32
// CHECK-NEXT: return &loom_train_step<float>;
// CHECK-NEXT: #else
// CHECK-NEXT: return nullptr;
// CHECK-NEXT: #endif
// CHECK: StepFn<double> loomStepF64() {
// CHECK: return &loom_train_step<double>;

// -----

// A single-device function (no mesh) is one rank; reshape names the same
// buffer, and a float constant is converted to the run's type.

func.func @forward(%x: tensor<2x3xf64>) -> tensor<6xf64> {
  %r = loom.reshape %x : tensor<2x3xf64> to tensor<6xf64>
  %c = arith.constant dense<2.5> : tensor<6xf64>
  %y = loom.mul %r, %c : (tensor<6xf64>, tensor<6xf64>) -> tensor<6xf64>
  return %y : tensor<6xf64>
}

// CHECK-LABEL: /// The step of every rank.
// CHECK: const T *v0 = arg0;
// CHECK: const std::vector<T> v_cst_values(6, static_cast<T>(2.5));
// CHECK-NEXT: const T *v_cst = ws.constant(v_cst_values);
// CHECK: LOOM_CHECK_MESSAGE(host::binary<T>(host::BinaryKind::Mul, v0, {6}, v_cst, {6}, v1, {6}),
// CHECK-NOT: Status loom_
// CHECK: s.mesh = {};

// -----

// A dropout draws by global index: each rank computes its block's place in
// the global tensor from the op's layout at run time (harness::blockOffset)
// and passes it with the step's run seed and RNG step (StepContext), as the
// interpreter's kernel does.

dist.mesh @m shape [2] axes ["tp"]
func.func @train_step(
    %x: tensor<4x3xf32> {dist.layout = #dist.layout<@m, [[], ["tp"]]>})
    -> (tensor<4x3xf32> {dist.layout = #dist.layout<@m, [[], ["tp"]]>}) {
  %y = loom.dropout %x {rate = 5.000000e-01 : f64, seed = 17 : i64, dist.layout = #dist.layout<@m, [[], ["tp"]]>} : tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// CHECK-LABEL: /// The step of every rank of mesh @m {tp:2}.
// CHECK: Status loom_train_step(mpi::Communicator &comm, const StepContext &context,
// CHECK: Shape v0_offset;
// CHECK-NEXT: LOOM_CHECK(blockOffset(comm.getMesh(), loomRank, "{{\[\[}}], [\"tp\"]]", {4, 6}, v0_offset), "`loom.dropout` at
// CHECK: host::dropout<T>(arg0, {4, 6}, v0_offset, {4, 3}, 0.5, 17, context.seed, context.step, v0);

// -----

// The static memory plan (docs/Codegen.md, "Memory"): a returned value is
// computed in the caller's result buffer (%d); a value returned through
// another name (%e, by its reshape) is a block of its own (offset -1) that
// the return copies; an optimizer update that is the last reader of the
// state it updates, and whose result is carried into it, writes into the
// argument's buffer, which the return hands to the result.

func.func @train_step(%p: tensor<4xf32> {loom.name = "w"}, %g: tensor<4xf32> {loom.name = "g"})
    -> (tensor<4xf32> {loom.name = "w"}, tensor<2x2xf32> {loom.name = "g2"}, tensor<4xf32> {loom.name = "d"}) {
  %d = loom.mul %g, %g : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = loom.add %d, %g : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %v = loom.reshape %e : tensor<4xf32> to tensor<2x2xf32>
  %new = loom.sgd_update %p, %d {lr = 0.1, momentum = 0.0, weight_decay = 0.0, dampening = 0.0} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %new, %v, %d : tensor<4xf32>, tensor<2x2xf32>, tensor<4xf32>
}

// CHECK-LABEL: /// The step of every rank.
// CHECK: T *v0 = ws.result(results[2].floats, 4);
// CHECK: T *v1 = ws.at<T>(kArenaOffsets_train_step[0][sizeof(T) == 8], 4);
// CHECK: const T *v2 = v1;
// CHECK: // In place: the update is the last reader of arg0.
// CHECK-NEXT: T *v_new_param = const_cast<T *>(arg0);
// CHECK-NEXT: host::sgdUpdate<T>(arg0, v0, nullptr, {4}, 0.10000000000000001, 0.0, 0.0, 0.0, false, v_new_param, nullptr);
// CHECK: // func.return
// CHECK-NEXT: std::swap(results[0].floats, const_cast<Buffer<T> &>(args[0]).floats);
// CHECK-NEXT: results[1].floats.assign(v2, v2 + 4);
// CHECK-NEXT: return Status::success();
// CHECK: const int64_t kArenaOffsets_train_step[][2] = {
// CHECK-NEXT: {-1, -1},
// CHECK-NEXT: };
// CHECK-NEXT: const int64_t kArenaBytes_train_step[][2] = {{[{][{]}}0, 0}, };
// CHECK-NOT: Status loom_

// -----

// A carried value computed after the last read of its argument (as ZeRO's
// gathered parameters are) takes the argument's place, zeroed first, and
// the return hands that buffer to the result; a value computed while the
// argument is still read gets a place of its own.

func.func @train_step(%p: tensor<4xf32> {loom.name = "w"}, %q: tensor<4xf32> {loom.name = "u"})
    -> (tensor<4xf32> {loom.name = "w"}, tensor<4xf32> {loom.name = "u"}) {
  %d = loom.mul %p, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = loom.add %d, %q : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w = loom.add %d, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %w, %u : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: /// The step of every rank.
// CHECK: T *v0 = ws.at<T>(kArenaOffsets_train_step[0][sizeof(T) == 8], 4);
// CHECK: T *v1 = ws.result(results[1].floats, 4);
// CHECK: // In the place of arg0, which no op reads from here on.
// CHECK-NEXT: T *v2 = ws.reuse(arg0, 4);
// CHECK: // func.return
// CHECK-NEXT: std::swap(results[0].floats, const_cast<Buffer<T> &>(args[0]).floats);
// CHECK-NEXT: return Status::success();
