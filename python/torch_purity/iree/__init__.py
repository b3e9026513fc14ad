"""Everything Purity does because the code runs on IREE 3.13: the ABI and
workaround passes on linalg-on-tensors (`iree.passes`), the tie policy, the
compiler flags per target (`targets`), the loaded module, the runtime that
hands tensors to IREE and applies the program's effects, and saved programs.

`runtime`, `module` and `saved` need torch and IREE's runtime only (no
torch-mlir, no IREE compiler): a saved program runs where neither is installed.
This package's `__init__` imports nothing, so each caller loads only what it needs.
"""
