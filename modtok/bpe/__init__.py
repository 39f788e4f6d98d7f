"""Byte-level BPE: one merge engine (:mod:`.engine`), a model (:mod:`.model`) and
the policies that drive the engine (standard, continued, sequential, concat)."""
