// RUN: purity-opt %s --purity-seed-from-argument --split-input-file -verify-diagnostics

// A seed read inside a loop body: the chain of seeds cannot be followed there.
module {
  ml_program.global private mutable @global_seed(dense<0> : tensor<i64>) : tensor<i64>
  func.func @seed_in_loop(%n: index) -> tensor<i64> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant dense<0> : tensor<i64>
    %last = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<i64>) {
      // expected-error @+1 {{the random-number seed @global_seed is used inside a region}}
      %seed = ml_program.global_load @global_seed : tensor<i64>
      scf.yield %seed : tensor<i64>
    }
    return %last : tensor<i64>
  }
}
