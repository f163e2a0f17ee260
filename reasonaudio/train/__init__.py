"""`bench train`: a small dual encoder trained on a training build's planted minimal pairs.

data -> features -> model -> loss -> trainer -> card (the model directory), plus the
``trained`` registry embedder (``embedder.py``) and the train-vs-test experiment.
"""
