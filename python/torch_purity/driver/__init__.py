"""The compile driver: trace, import, run the pipeline's stages (in a child
process), compile with IREE and cache one entry per input signature.

It drives every layer (importer, passes, IREE) and so sits above them all;
nothing below imports it.
"""
