// RUN: purity-opt %s --purity-runtime-loop-entry --split-input-file | filecheck %s

// A while loop whose first test folded to true (its carried values were
// constants): the initial condition becomes torch_c.from_i1 of an
// arith.constant, so torch-mlir lowers the loop while-like, not as a
// for-loop from 0 to INT64_MAX that ignores the body's condition.
// CHECK-LABEL: func.func @folded_first_test(
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[ENTRY:.*]] = torch_c.from_i1 %[[TRUE]]
// CHECK: torch.prim.Loop %{{.*}}, %[[ENTRY]], init(
func.func @folded_first_test(%a: !torch.vtensor<[2],f32>) -> !torch.vtensor<[],si64> {
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %max = torch.constant.int 9223372036854775807
  %zero = torch.vtensor.literal(dense<0> : tensor<si64>) : !torch.vtensor<[],si64>
  %0 = torch.prim.Loop %max, %true, init(%zero) {
  ^bb0(%iv: !torch.int, %i: !torch.vtensor<[],si64>):
    %next = torch.aten.add.Scalar %i, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
    %lt = torch.aten.lt.Scalar %next, %int3 : !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[],i1>
    %again = torch.aten.Bool.Tensor %lt : !torch.vtensor<[],i1> -> !torch.bool
    torch.prim.Loop.condition %again, iter(%next : !torch.vtensor<[],si64>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[],si64>) -> !torch.vtensor<[],si64>
  return %0 : !torch.vtensor<[],si64>
}

// -----

// A for-loop (the body's condition is the constant true too) is left alone.
// CHECK-LABEL: func.func @for_loop(
// CHECK-NOT: torch_c.from_i1
// CHECK: %[[TRUE:.*]] = torch.constant.bool true
// CHECK: torch.prim.Loop %{{.*}}, %[[TRUE]], init(
func.func @for_loop(%n: !torch.int) -> !torch.vtensor<[],si64> {
  %true = torch.constant.bool true
  %int1 = torch.constant.int 1
  %zero = torch.vtensor.literal(dense<0> : tensor<si64>) : !torch.vtensor<[],si64>
  %0 = torch.prim.Loop %n, %true, init(%zero) {
  ^bb0(%iv: !torch.int, %i: !torch.vtensor<[],si64>):
    %next = torch.aten.add.Scalar %i, %int1, %int1 : !torch.vtensor<[],si64>, !torch.int, !torch.int -> !torch.vtensor<[],si64>
    torch.prim.Loop.condition %true, iter(%next : !torch.vtensor<[],si64>)
  } : (!torch.int, !torch.bool, !torch.vtensor<[],si64>) -> !torch.vtensor<[],si64>
  return %0 : !torch.vtensor<[],si64>
}
