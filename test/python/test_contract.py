"""The IR contract module: the calling convention read from the last stage's
IR alone, and its JSON form (saved programs) round-tripping."""

import torch

from torch_purity.contract import CallingConvention, IndexCheck, MutationRecord
from torch_purity.contract.ir import read_calling_convention
from torch_purity.importer import new_context
from torch_purity.layout import Layout

# What the iree-abi stage leaves for a program writing input 0 in place
# (tied), returning a view of input 1, an si64 and a ui8 result in storage
# arguments, with one index check and a metadata mutation of input 1.
IREE_ABI_IR = """
func.func @main(
    %x: tensor<3xf32> {iree.abi.output = 4 : index},
    %y: tensor<2x3xf32> {purity.new_sizes = array<i64: 3, 2>, purity.new_strides = array<i64: 1, 3>,
                         purity.new_storage_offset = 0 : i64, purity.unwritten},
    %s0: tensor<2xi64> {iree.abi.output = 1 : index, purity.result_storage = 1 : i64},
    %s1: tensor<2xi8> {iree.abi.output = 2 : index, purity.result_storage = 2 : i64},
    %s2: tensor<2xi1> {iree.abi.output = 3 : index, purity.result_storage = 3 : i64})
    -> (tensor<3xf32> {purity.aliases_input = 1 : i64, purity.view_sizes = array<i64: 3>,
                       purity.view_storage_offset = 3 : i64, purity.view_strides = array<i64: 1>},
        tensor<2xi64>, tensor<2xi8>,
        tensor<2xi1> {purity.index_checks = [{count = 2 : i64, location = "model.py:7", op = "aten.gather"}]},
        tensor<3xf32> {purity.written_input = 0 : i64})
    attributes {purity.result_element_types = ["f32", "si64", "ui8", "i1", "f32"],
                purity.mutations = [{chain = "", kind = "write", location = "model.py:5", op = "aten.add_.Tensor",
                                     target = "argument 0"}]} {
  %v = tensor.extract_slice %y[1, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<3xf32>
  %a = arith.constant dense<1> : tensor<2xi64>
  %b = arith.constant dense<1> : tensor<2xi8>
  %c = arith.constant dense<true> : tensor<2xi1>
  return %v, %a, %b, %c, %x : tensor<3xf32>, tensor<2xi64>, tensor<2xi8>, tensor<2xi1>, tensor<3xf32>
}
"""


def read_example() -> CallingConvention:
    from torch_mlir import ir

    with new_context():
        return read_calling_convention(ir.Module.parse(IREE_ABI_IR))


def test_calling_convention_from_the_last_stage_alone():
    convention = read_example()
    assert convention.output_results == [0, 1, 2]
    assert convention.output_views == {0: (1, Layout((3,), (1,), 3))}
    assert convention.written_inputs == [(4, 0)]
    assert convention.tied_inputs == {0}  # storage arguments are not tied inputs
    assert convention.unwritten_inputs == {1}
    assert convention.metadata_mutations == {1: Layout((3, 2), (1, 3), 0)}
    # Signedness and booleans come from the recorded Torch element types, not the builtin types.
    assert convention.result_dtypes == [torch.float32, torch.int64, torch.uint8, torch.bool, torch.float32]
    assert convention.result_storage == [(1, (2,)), (2, (2,)), (3, (2,))]
    assert convention.index_checks == (3, (IndexCheck("aten.gather", "model.py:7", 2),))
    assert convention.mutations == [MutationRecord("write", "aten.add_.Tensor", "model.py:5", "argument 0", "")]
    assert convention.mutations[0].argument == 0


def test_calling_convention_round_trips_through_json():
    convention = read_example()
    assert CallingConvention.from_json(convention.to_json()) == convention
