// RUN: purity-opt %s --purity-partition-joint --split-input-file | filecheck %s
// RUN: purity-opt %s '--purity-partition-joint=recompute=false' --split-input-file | filecheck %s --check-prefix=SAVE-ALL

// y = exp(w * x); the backward needs exp's result, which is also the output:
// kept by reference to the output, not stored twice. x is passed by
// reference (the caller's tensor); w's gradient is the only result.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[W:.*]]: !torch.vtensor<[3],f32> {purity.input = "param:w"}, %[[X:.*]]: !torch.vtensor<[3],f32> {purity.input = "input:0"})
// CHECK-SAME: -> !torch.vtensor<[3],f32>
// CHECK: %[[M:.*]] = torch.aten.mul.Tensor %[[W]], %[[X]]
// CHECK: %[[E:.*]] = torch.aten.exp %[[M]]
// CHECK-NOT: torch.aten.mul.Tensor
// CHECK: return %[[E]] : !torch.vtensor<[3],f32>
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[BX:.*]]: !torch.vtensor<[3],f32> {purity.saved_argument = 1 : i64}, %[[BE:.*]]: !torch.vtensor<[3],f32> {purity.saved_output = 0 : i64}, %[[G:.*]]: !torch.vtensor<[3],f32> {purity.tangent = 0 : i64})
// CHECK-SAME: -> (!torch.vtensor<[3],f32> {purity.gradient_of = 0 : i64})
// CHECK-NOT: torch.aten.exp
// CHECK: %[[GE:.*]] = torch.aten.mul.Tensor %[[G]], %[[BE]]
// CHECK: %[[GW:.*]] = torch.aten.mul.Tensor %[[GE]], %[[BX]]
// CHECK: return %[[GW]]
func.func @main(%w: !torch.vtensor<[3],f32> {purity.input = "param:w"}, %x: !torch.vtensor<[3],f32> {purity.input = "input:0"}, %g: !torch.vtensor<[3],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.gradient_of = 0 : i64}) {
  %m = torch.aten.mul.Tensor %w, %x : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %e = torch.aten.exp %m : !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %ge = torch.aten.mul.Tensor %g, %e : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %gw = torch.aten.mul.Tensor %ge, %x : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  return %e, %gw : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}

// -----

// A buffer the forward writes (a running statistic): its write stays in the
// forward, once; the backward reads the buffer's value from before the
// write, so that value is saved as a result (the caller's tensor will hold
// the new one) instead of being passed by reference.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[W:[^:]*]]: !torch.vtensor<[3],f32>, %[[S:[^:]*]]: !torch.vtensor<[3],f32> {purity.input = "buffer:stat"})
// CHECK-SAME: -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.written_input = 1 : i64}, !torch.vtensor<[3],f32> {purity.saved = 0 : i64})
// CHECK: %[[Y:.*]] = torch.aten.mul.Tensor %[[W]], %[[S]]
// CHECK: %[[NEW:.*]] = torch.aten.add.Tensor %[[S]], %[[W]]
// CHECK: return %[[Y]], %[[NEW]], %[[S]]
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[OLD:[^:]*]]: !torch.vtensor<[3],f32>, %[[G:[^:]*]]: !torch.vtensor<[3],f32> {purity.tangent = 0 : i64})
// CHECK-NOT: torch.aten.add.Tensor
// CHECK: %[[GW:.*]] = torch.aten.mul.Tensor %[[G]], %[[OLD]]
// CHECK: return %[[GW]]
func.func @main(%w: !torch.vtensor<[3],f32>, %stat: !torch.vtensor<[3],f32> {purity.input = "buffer:stat"}, %g: !torch.vtensor<[3],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.gradient_of = 0 : i64}, !torch.vtensor<[3],f32> {purity.written_input = 1 : i64}) {
  %int1 = torch.constant.int 1
  %y = torch.aten.mul.Tensor %w, %stat : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %new = torch.aten.add.Tensor %stat, %w, %int1 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.int -> !torch.vtensor<[3],f32>
  %gw = torch.aten.mul.Tensor %g, %stat : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  return %y, %gw, %new : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}

// -----

// relu of an input, read by the backward: recomputed there from the input
// (passed by reference) instead of saved; constants are cloned, never
// saved. With recompute=false the relu's result is saved.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: -> !torch.vtensor<[4],f32>
// CHECK: torch.aten.relu
// CHECK: torch.aten.mul.Tensor
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[X:[^:]*]]: !torch.vtensor<[4],f32> {purity.saved_argument = 0 : i64}, %[[G:[^:]*]]: !torch.vtensor<[4],f32> {purity.tangent = 0 : i64})
// CHECK: %[[R:.*]] = torch.aten.relu %[[X]]
// CHECK: torch.aten.mul.Tensor %[[G]], %[[R]]
// SAVE-ALL: %[[R:.*]] = torch.aten.relu
// SAVE-ALL-NEXT: torch.aten.mul.Tensor
// SAVE-ALL-NEXT: return %{{.*}}, %[[R]]
// SAVE-ALL: func.func @backward(
// SAVE-ALL-NOT: torch.aten.relu
// SAVE-ALL: return
func.func @main(%x: !torch.vtensor<[4],f32>, %w: !torch.vtensor<[4],f32>, %g: !torch.vtensor<[4],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> {purity.gradient_of = 1 : i64}) {
  %r = torch.aten.relu %x : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %y = torch.aten.mul.Tensor %r, %w : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %gw = torch.aten.mul.Tensor %g, %r : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %y, %gw : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// A small value (a matrix-vector product, not worth recomputing) broadcast
// to a large one the backward reads: the broadcast is recomputed from the
// small value, which is saved instead (16 bytes for 64).
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: -> (!torch.vtensor<[4,4],f32>, !torch.vtensor<[4],f32> {purity.saved = 0 : i64})
// CHECK: %[[S:.*]] = torch.aten.mv
// CHECK: return %{{.*}}, %[[S]]
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[SMALL:[^:]*]]: !torch.vtensor<[4],f32>, %[[G:[^:]*]]: !torch.vtensor<[4,4],f32> {purity.tangent = 0 : i64})
// CHECK-NOT: torch.aten.mv
// CHECK: %[[B:.*]] = torch.aten.expand %[[SMALL]]
// CHECK: torch.aten.mul.Tensor %[[G]], %[[B]]
// SAVE-ALL: torch.aten.mv
// SAVE-ALL-NEXT: %[[B:.*]] = torch.aten.expand
// SAVE-ALL-NEXT: torch.aten.mul.Tensor
// SAVE-ALL-NEXT: return %{{.*}}, %[[B]]
func.func @main(%m: !torch.vtensor<[4,4],f32>, %v: !torch.vtensor<[4],f32>, %x: !torch.vtensor<[4,4],f32>, %g: !torch.vtensor<[4,4],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32> {purity.gradient_of = 2 : i64}) {
  %int4 = torch.constant.int 4
  %false = torch.constant.bool false
  %sizes = torch.prim.ListConstruct %int4, %int4 : (!torch.int, !torch.int) -> !torch.list<int>
  %s = torch.aten.mv %m, %v : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %b = torch.aten.expand %s, %sizes, %false : !torch.vtensor<[4],f32>, !torch.list<int>, !torch.bool -> !torch.vtensor<[4,4],f32>
  %y = torch.aten.mul.Tensor %b, %x : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  %gx = torch.aten.mul.Tensor %g, %b : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32> -> !torch.vtensor<[4,4],f32>
  return %y, %gx : !torch.vtensor<[4,4],f32>, !torch.vtensor<[4,4],f32>
}

// -----

// An op only the backward needs that depends on no tangent (a transpose of
// a weight) runs in the backward: nothing is saved for it.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: -> !torch.vtensor<[2,3],f32>
// CHECK-NOT: torch.aten.t
// CHECK: torch.aten.mm
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[W:[^:]*]]: !torch.vtensor<[3,3],f32> {purity.saved_argument = 0 : i64}, %[[G:[^:]*]]: !torch.vtensor<[2,3],f32> {purity.tangent = 0 : i64})
// CHECK: %[[T:.*]] = torch.aten.t %[[W]]
// CHECK: torch.aten.mm %[[G]], %[[T]]
func.func @main(%w: !torch.vtensor<[3,3],f32>, %x: !torch.vtensor<[2,3],f32>, %g: !torch.vtensor<[2,3],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32> {purity.gradient_of = 1 : i64}) {
  %y = torch.aten.mm %x, %w : !torch.vtensor<[2,3],f32>, !torch.vtensor<[3,3],f32> -> !torch.vtensor<[2,3],f32>
  %wt = torch.aten.t %w : !torch.vtensor<[3,3],f32> -> !torch.vtensor<[3,3],f32>
  %gx = torch.aten.mm %g, %wt : !torch.vtensor<[2,3],f32>, !torch.vtensor<[3,3],f32> -> !torch.vtensor<[2,3],f32>
  return %y, %gx : !torch.vtensor<[2,3],f32>, !torch.vtensor<[2,3],f32>
}

// -----

// A random op only the backward reads stays in the forward, where eager
// draws it; its result is saved.
// CHECK-LABEL: func.func @forward(
// CHECK: %[[R:.*]] = torch.aten.bernoulli.p
// CHECK: return %{{.*}}, %[[R]]
// CHECK-LABEL: func.func @backward(
// CHECK-NOT: torch.aten.bernoulli
// CHECK: return
func.func @main(%x: !torch.vtensor<[4],f32>, %g: !torch.vtensor<[4],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> {purity.gradient_of = 0 : i64}) {
  %p = torch.constant.float 5.000000e-01
  %none = torch.constant.none
  %y = torch.aten.exp %x : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %mask = torch.aten.bernoulli.p %x, %p, %none : !torch.vtensor<[4],f32>, !torch.float, !torch.none -> !torch.vtensor<[4],f32>
  %gx = torch.aten.mul.Tensor %g, %mask : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %y, %gx : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}

// -----

// A function without tangents or gradients is not a joint: left alone.
// CHECK-LABEL: func.func @inference(
// CHECK: torch.aten.exp
// CHECK-NOT: func.func @backward
func.func @inference(%x: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %y = torch.aten.exp %x : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %y : !torch.vtensor<[4],f32>
}

// -----

// The backward reads the final value of a written buffer: the caller's
// tensor holds it once the forward ran, so it is kept by reference
// (`purity.saved_argument`), not returned a second time.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.written_input = 1 : i64})
// CHECK-NOT: purity.saved =
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: %[[NEW:[^:]*]]: !torch.vtensor<[3],f32> {purity.saved_argument = 1 : i64}, %[[G:[^:]*]]: !torch.vtensor<[3],f32> {purity.tangent = 0 : i64})
// CHECK: torch.aten.mul.Tensor %[[G]], %[[NEW]]
func.func @main(%w: !torch.vtensor<[3],f32>, %buffer: !torch.vtensor<[3],f32> {purity.input = "buffer:b"}, %g: !torch.vtensor<[3],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> {purity.gradient_of = 0 : i64}, !torch.vtensor<[3],f32> {purity.written_input = 1 : i64}) {
  %int1 = torch.constant.int 1
  %new = torch.aten.add.Tensor %buffer, %w, %int1 : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.int -> !torch.vtensor<[3],f32>
  %y = torch.aten.mul.Tensor %new, %w : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  %gw = torch.aten.mul.Tensor %g, %new : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32> -> !torch.vtensor<[3],f32>
  return %y, %gw, %new : !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>, !torch.vtensor<[3],f32>
}

// -----

// A random op without tensor operands (`rand`) that only the backward reads:
// drawn in the forward and saved, never cloned into the backward (a second
// draw would differ from the forward's).
// CHECK-LABEL: func.func @forward(
// CHECK: %[[R:.*]] = torch.aten.rand
// CHECK: return %{{.*}}, %[[R]]
// CHECK-LABEL: func.func @backward(
// CHECK-NOT: torch.aten.rand
// CHECK: return
func.func @main(%x: !torch.vtensor<[4],f32>, %g: !torch.vtensor<[4],f32> {purity.tangent = 0 : i64}) -> (!torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> {purity.gradient_of = 0 : i64}) {
  %int4 = torch.constant.int 4
  %none = torch.constant.none
  %sizes = torch.prim.ListConstruct %int4 : (!torch.int) -> !torch.list<int>
  %y = torch.aten.exp %x : !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  %noise = torch.aten.rand %sizes, %none, %none, %none, %none : !torch.list<int>, !torch.none, !torch.none, !torch.none, !torch.none -> !torch.vtensor<[4],f32>
  %gx = torch.aten.mul.Tensor %g, %noise : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32> -> !torch.vtensor<[4],f32>
  return %y, %gx : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>
}
