// RUN: purity-opt %s --purity-split-independent-parts --split-input-file | filecheck %s
// RUN: purity-opt %s '--purity-split-independent-parts=parts=2' --split-input-file | filecheck %s --check-prefix=TWO

// Two updates written into their own arguments (1M elements each): two
// parts, each returning its own result with its tie renumbered and the other
// part's tie dropped; the ops of the other part are gone, the constant is
// each part's own. The function itself is unchanged.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %arg0: tensor<1024x1024xf32> {iree.abi.output = 0 : index}, %arg1: tensor<1024x1024xf32> {iree.abi.output = 1 : index})
// CHECK-COUNT-2: linalg.generic
// CHECK: return %{{.*}}, %{{.*}} : tensor<1024x1024xf32>, tensor<1024x1024xf32>
// CHECK-LABEL: func.func @main$part0(
// CHECK-SAME: %arg0: tensor<1024x1024xf32> {iree.abi.output = 0 : index}, %arg1: tensor<1024x1024xf32>)
// CHECK-SAME: -> (tensor<1024x1024xf32> {purity.written_input = 0 : i64})
// CHECK: arith.constant 2.0
// CHECK: %[[DOUBLED:.*]] = linalg.generic {{.*}} ins(%arg0 :
// CHECK: arith.mulf
// CHECK-NOT: linalg.generic
// CHECK: return %[[DOUBLED]] : tensor<1024x1024xf32>
// CHECK-LABEL: func.func @main$part1(
// CHECK-SAME: %arg0: tensor<1024x1024xf32>, %arg1: tensor<1024x1024xf32> {iree.abi.output = 0 : index})
// CHECK-SAME: -> (tensor<1024x1024xf32> {purity.written_input = 1 : i64})
// CHECK: arith.constant 2.0
// CHECK: %[[PLUS:.*]] = linalg.generic {{.*}} ins(%arg1 :
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[PLUS]] : tensor<1024x1024xf32>
#m = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%a: tensor<1024x1024xf32> {iree.abi.output = 0 : index}, %b: tensor<1024x1024xf32> {iree.abi.output = 1 : index}) -> (tensor<1024x1024xf32> {purity.written_input = 0 : i64}, tensor<1024x1024xf32> {purity.written_input = 1 : i64}) {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<1024x1024xf32>
  %doubled = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.mulf %x, %two : f32
    linalg.yield %r : f32
  } -> tensor<1024x1024xf32>
  %plus = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %two : f32
    linalg.yield %r : f32
  } -> tensor<1024x1024xf32>
  return %doubled, %plus : tensor<1024x1024xf32>, tensor<1024x1024xf32>
}

// -----

// The second update reads the first argument before the first update's
// value is written into it: one piece, nothing is split.
// CHECK-LABEL: test.case = "a_written_argument_read_by_the_other"
// CHECK-NOT: $part
#m = affine_map<(d0, d1) -> (d0, d1)>
module attributes {test.case = "a_written_argument_read_by_the_other"} {
  func.func @main(%a: tensor<1024x1024xf32> {iree.abi.output = 0 : index}, %b: tensor<1024x1024xf32> {iree.abi.output = 1 : index}) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<1024x1024xf32>
    %doubled = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.mulf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<1024x1024xf32>
    %sum = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]} ins(%b, %a : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %r = arith.addf %x, %y : f32
      linalg.yield %r : f32
    } -> tensor<1024x1024xf32>
    return %doubled, %sum : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
}
// -----

// Two independent updates of 64K elements each: too little work to pay for
// a second thread, nothing is split.
// CHECK-LABEL: test.case = "small"
// CHECK-NOT: $part
#m = affine_map<(d0) -> (d0)>
module attributes {test.case = "small"} {
  func.func @main(%a: tensor<65536xf32> {iree.abi.output = 0 : index}, %b: tensor<65536xf32> {iree.abi.output = 1 : index}) -> (tensor<65536xf32>, tensor<65536xf32>) {
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<65536xf32>
    %doubled = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]} ins(%a : tensor<65536xf32>) outs(%e : tensor<65536xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.mulf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<65536xf32>
    %plus = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]} ins(%b : tensor<65536xf32>) outs(%e : tensor<65536xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.addf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<65536xf32>
    return %doubled, %plus : tensor<65536xf32>, tensor<65536xf32>
  }
}
// -----

// Three equal updates (1M elements each). With four parts (the default),
// one each. With two parts (two threads), two of them share the first: it
// holds two thirds of the work, yet the parts still take two thirds of the
// whole's time, so the function is split (no single piece holds more than
// `max_share`).
// CHECK-LABEL: test.case = "three_equal_pieces"
// CHECK: func.func @main$part0(
// CHECK: func.func @main$part1(
// CHECK: func.func @main$part2(
// TWO-LABEL: test.case = "three_equal_pieces"
// TWO: func.func @main$part0(
// TWO-SAME: -> (tensor<1048576xf32> {purity.written_input = 0 : i64}, tensor<1048576xf32> {purity.written_input = 2 : i64})
// TWO: func.func @main$part1(
// TWO-SAME: -> (tensor<1048576xf32> {purity.written_input = 1 : i64})
// TWO-NOT: $part2
#m = affine_map<(d0) -> (d0)>
module attributes {test.case = "three_equal_pieces"} {
  func.func @main(%a: tensor<1048576xf32> {iree.abi.output = 0 : index}, %b: tensor<1048576xf32> {iree.abi.output = 1 : index}, %c: tensor<1048576xf32> {iree.abi.output = 2 : index}) -> (tensor<1048576xf32> {purity.written_input = 0 : i64}, tensor<1048576xf32> {purity.written_input = 1 : i64}, tensor<1048576xf32> {purity.written_input = 2 : i64}) {
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<1048576xf32>
    %x2 = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]} ins(%a : tensor<1048576xf32>) outs(%e : tensor<1048576xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.mulf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<1048576xf32>
    %y2 = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]} ins(%b : tensor<1048576xf32>) outs(%e : tensor<1048576xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.addf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<1048576xf32>
    %z2 = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]} ins(%c : tensor<1048576xf32>) outs(%e : tensor<1048576xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.subf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<1048576xf32>
    return %x2, %y2, %z2 : tensor<1048576xf32>, tensor<1048576xf32>, tensor<1048576xf32>
  }
}
// -----

// One piece holds nearly all the work (a 4M-element update beside a
// 1K-element one): a second thread would wait, nothing is split.
// CHECK-LABEL: test.case = "lopsided"
// CHECK-NOT: $part
#m = affine_map<(d0) -> (d0)>
module attributes {test.case = "lopsided"} {
  func.func @main(%a: tensor<4194304xf32> {iree.abi.output = 0 : index}, %b: tensor<1024xf32> {iree.abi.output = 1 : index}) -> (tensor<4194304xf32>, tensor<1024xf32>) {
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<4194304xf32>
    %f = tensor.empty() : tensor<1024xf32>
    %doubled = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]} ins(%a : tensor<4194304xf32>) outs(%e : tensor<4194304xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.mulf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<4194304xf32>
    %plus = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel"]} ins(%b : tensor<1024xf32>) outs(%f : tensor<1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.addf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<1024xf32>
    return %doubled, %plus : tensor<4194304xf32>, tensor<1024xf32>
  }
}
// -----

// An op the pass does not know to be free of effects (a call) keeps the
// function whole.
// CHECK-LABEL: test.case = "with_a_call"
// CHECK-NOT: $part
#m = affine_map<(d0, d1) -> (d0, d1)>
module attributes {test.case = "with_a_call"} {
  func.func private @log(tensor<1024x1024xf32>)
  func.func @main(%a: tensor<1024x1024xf32> {iree.abi.output = 0 : index}, %b: tensor<1024x1024xf32> {iree.abi.output = 1 : index}) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<1024x1024xf32>
    %doubled = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.mulf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<1024x1024xf32>
    call @log(%doubled) : (tensor<1024x1024xf32>) -> ()
    %plus = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.addf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<1024x1024xf32>
    return %doubled, %plus : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
}

// -----

// A function other than `main` (a training program's `forward`), and a
// `main` of dynamic sizes, are not split: the runtime runs neither in parts.
// CHECK-LABEL: test.case = "other_function_and_dynamic_sizes"
// CHECK-NOT: $part
#m = affine_map<(d0, d1) -> (d0, d1)>
module attributes {test.case = "other_function_and_dynamic_sizes"} {
  func.func @forward(%a: tensor<1024x1024xf32> {iree.abi.output = 0 : index}, %b: tensor<1024x1024xf32> {iree.abi.output = 1 : index}) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<1024x1024xf32>
    %doubled = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.mulf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<1024x1024xf32>
    %plus = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.addf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<1024x1024xf32>
    return %doubled, %plus : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
  func.func @main(%a: tensor<?x1024xf32> {iree.abi.output = 0 : index}, %b: tensor<?x1024xf32> {iree.abi.output = 1 : index}) -> (tensor<?x1024xf32>, tensor<?x1024xf32>) {
    %two = arith.constant 2.0 : f32
    %c0 = arith.constant 0 : index
    %n = tensor.dim %a, %c0 : tensor<?x1024xf32>
    %e = tensor.empty(%n) : tensor<?x1024xf32>
    %doubled = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x1024xf32>) outs(%e : tensor<?x1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.mulf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<?x1024xf32>
    %plus = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<?x1024xf32>) outs(%e : tensor<?x1024xf32>) {
    ^bb0(%x: f32, %o: f32):
      %r = arith.addf %x, %two : f32
      linalg.yield %r : f32
    } -> tensor<?x1024xf32>
    return %doubled, %plus : tensor<?x1024xf32>, tensor<?x1024xf32>
  }
}

// -----

// One argument takes another argument's value (`x.copy_(y)`): no op makes
// the written value, so nothing would order the other part's read of x
// before the write; the function stays whole.
// CHECK-LABEL: test.case = "an_argument_written_with_an_argument"
// CHECK-NOT: $part
#m = affine_map<(d0, d1) -> (d0, d1)>
module attributes {test.case = "an_argument_written_with_an_argument"} {
  func.func @main(%x: tensor<1024x1024xf32> {iree.abi.output = 0 : index}, %y: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32> {iree.abi.output = 1 : index}) -> (tensor<1024x1024xf32>, tensor<1024x1024xf32>) {
    %two = arith.constant 2.0 : f32
    %e = tensor.empty() : tensor<1024x1024xf32>
    %doubled = linalg.generic {indexing_maps = [#m, #m], iterator_types = ["parallel", "parallel"]} ins(%y : tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
    ^bb0(%v: f32, %o: f32):
      %r = arith.mulf %v, %two : f32
      linalg.yield %r : f32
    } -> tensor<1024x1024xf32>
    %plus = linalg.generic {indexing_maps = [#m, #m, #m], iterator_types = ["parallel", "parallel"]} ins(%b, %x : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%e : tensor<1024x1024xf32>) {
    ^bb0(%v: f32, %w: f32, %o: f32):
      %r = arith.addf %v, %w : f32
      linalg.yield %r : f32
    } -> tensor<1024x1024xf32>
    return %y, %plus : tensor<1024x1024xf32>, tensor<1024x1024xf32>
  }
}
