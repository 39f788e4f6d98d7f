"""Modular LM pretraining (§6 of "To Each Language Its Tokenizer").

- :mod:`modtok.lm.model`     decoder-only Transformer with restricted logits
- :mod:`modtok.lm.loss`      restricted-vocabulary cross-entropy, bits per byte
- :mod:`modtok.lm.sampling`  Mono-only / Samp_Full(p) / Samp_Sub_n(n, p)
- :mod:`modtok.lm.batches`   monolingual batches tokenized with the sampled subtokenizer
- :mod:`modtok.lm.stream`    batches from one stream of lines (continued pretraining, byte-matched arms)
- :mod:`modtok.lm.train`     AdamW loop, checkpoints, metrics, DDP
- :mod:`modtok.lm.offload`   vocabulary rows + AdamW moments in a host store, row-sparse AdamW (§6.4)
- :mod:`modtok.lm.infer`     evaluation, generation (KV cache), compact model export
- :mod:`modtok.lm.embed_init` rows for new tokens: the mean of their constituents' rows
"""
