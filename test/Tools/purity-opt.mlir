// The driver: help, errors as diagnostics with exit status 1, Python passes
// in one PassManager with C++ passes, textual pipelines.

// RUN: purity-opt --help | filecheck %s --check-prefix=HELP
// HELP: Purity passes:
// HELP: --purity-functionalize {{.*}}Removes mutation and aliasing
// HELP: --split-input-file
// HELP: --verify-diagnostics

// RUN: not purity-opt %S/Inputs/broken.mlir 2>&1 | filecheck %s --check-prefix=PARSE
// PARSE: {{.*}}broken.mlir:2:13: error: {{.*}}unregistered dialect
// PARSE-NOT: Traceback

// RUN: not purity-opt %s --no-such-pass 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: purity-opt: error: unknown pass or option '--no-such-pass'

// RUN: not purity-opt %s --purity-functionalize=bogus=1 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION: purity-opt: error: pass 'purity-functionalize' has no option 'bogus'

// RUN: not purity-opt %S/Inputs/does-not-exist.mlir 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: purity-opt: error: could not open input file '{{.*}}does-not-exist.mlir'

// A Python pass, a func.func-anchored torch-mlir pass (nested automatically)
// and an upstream pass, in the order given, all seen by IR printing.
// RUN: purity-opt %s --purity-functionalize --torch-reduce-op-variants --canonicalize --mlir-print-ir-after-all -o %t 2>&1 | filecheck %s --check-prefix=PRINT
// PRINT: IR Dump After Functionalize: purity-functionalize ('builtin.module' operation)
// PRINT: IR Dump After ReduceOpVariants: torch-reduce-op-variants{{.*}}('func.func' operation: @bump)
// PRINT: IR Dump After CanonicalizerPass: canonicalize

// RUN: purity-opt %s '--pass-pipeline=builtin.module(purity-functionalize,func.func(cse))' | filecheck %s --check-prefix=PIPELINE
// RUN: cat %s | purity-opt - --purity-functionalize | filecheck %s --check-prefix=PIPELINE
// PIPELINE-LABEL: func.func @bump(
// PIPELINE: torch.aten.add.Scalar
// PIPELINE: torch.overwrite.tensor.contents

func.func @bump(%x: !torch.tensor<[3],f32>) -> !torch.none {
  %int1 = torch.constant.int 1
  %none = torch.constant.none
  %0 = torch.aten.add_.Scalar %x, %int1, %int1 : !torch.tensor<[3],f32>, !torch.int, !torch.int -> !torch.tensor<[3],f32>
  return %none : !torch.none
}
