"""Torch-dialect tensor types: element types read from and put into type text
(the Python bindings expose no Torch type classes)."""

from __future__ import annotations

from torch_mlir.ir import Type

# c10::ScalarType codes of Torch-dialect element types, as torch.aten.to.dtype takes them.
TORCH_SCALAR_TYPE_CODES = {
    "ui8": 0, "si8": 1, "si16": 2, "si32": 3, "si64": 4, "f16": 5, "f32": 6, "f64": 7, "i1": 11, "bf16": 15,
}  # fmt: skip


def element_type_text(tensor_type: Type | str) -> str:
    """`!torch.vtensor<[2,3],si64>` -> "si64" (`complex<f32>` stays whole)."""
    text = str(tensor_type)
    return text[text.rindex(",") + 1 : -1]


def with_element_type_text(tensor_type: Type | str, element: str) -> str:
    """`!torch.vtensor<[2,3],si64>`, "i1" -> `!torch.vtensor<[2,3],i1>`."""
    text = str(tensor_type)
    return text[: text.rindex(",") + 1] + element + ">"


def with_element_type(tensor_type: Type, element: str) -> Type:
    return Type.parse(with_element_type_text(tensor_type, element), tensor_type.context)
