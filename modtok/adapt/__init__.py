"""Adapting a deployed tokenizer and its model: extend it with a language, or trim it to some.

- :mod:`.extend`    continued BPE on a deployed tokenizer in its own ids (arms R1, R2), the
                    invariance check, and ``run``: the whole ``modtok extend``
- :mod:`.invariance` what an extension kept of its base (Proposition 1), the report of both checks
- :mod:`.spm`       continued BPE on a SentencePiece BPE ``.model`` (Mistral, Llama-2 style)
- :mod:`.filters`   which learned merges are kept: a script's characters, the §V and App. H filters
- :mod:`.trim`      a tokenizer (and its model's rows) cut to the tokens some languages use
- :mod:`.hf_model`  a model's embedding rows grown or cut (tied or untied, padding kept)
- :mod:`.hf_files`  the files that make ``transformers`` load an adapted tokenizer as it is
"""
