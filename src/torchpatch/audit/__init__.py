"""torchpatch audit: checkpoints examined statically, without unpickling or importing torch."""
