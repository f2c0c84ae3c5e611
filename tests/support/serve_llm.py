"""Serve a GGUF model with llama.cpp's OpenAI-compatible server (xllamacpp), on 127.0.0.1.

``serve_llm.py MODEL.gguf PORT`` prints ``READY <url>`` once the model is loaded, then serves
until killed. One thread, one slot and no prompt cache: identical requests give identical
answers (see ``shared/notes/local-llm.md``).
"""

import sys
import time

import xllamacpp as xlc

params = xlc.CommonParams()
params.model.path = sys.argv[1]
params.hostnames = ["127.0.0.1"]
params.port = int(sys.argv[2])
params.n_ctx = 8192
params.n_parallel = 1
params.cpuparams.n_threads = 1
params.cpuparams_batch.n_threads = 1
params.cache_prompt = False
server = xlc.Server(params)
print("READY", server.listening_address, flush=True)
while True:
    time.sleep(3600)
