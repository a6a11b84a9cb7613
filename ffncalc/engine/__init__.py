"""The engines: one module a question, each assembling the arithmetic modules for its command from that command's
options (a typed value whose errors name its fields) — ``memory.py`` (MemoryOptions), ``serving.py`` (the serving
engine's KV budget and capacity, and `solve`, for memory), ``speed.py`` (SpeedOptions), ``train.py``
(TrainOptions) — on the inputs they share (``inputs.py``). ``ffncalc.api`` is the door: it loads models and hands
them to an engine."""
