"""Tokenizers as files and objects, whoever trained them.

- :mod:`modtok.artifacts.tokenizer_json` the one reader/writer of HF ``tokenizer.json``
  (merges, properness, restriction to an id set)
- :mod:`modtok.artifacts.modular`   ``ModularTokenizer``: one global id space, per-language ids,
  subtokenizers of any language subset; saved as ``tokenizer.json`` + ``lang_to_ids.json``
- :mod:`modtok.artifacts.deployed`  deployed tokenizers (Llama-3, Qwen, cl100k, o200k) offline
- :mod:`modtok.artifacts.baselines` the peers: byte-level BPE by HF ``tokenizers``, Unigram by
  ``sentencepiece``, monolingual and joint
"""
