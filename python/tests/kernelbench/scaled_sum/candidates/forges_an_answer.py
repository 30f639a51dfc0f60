# Writes its own answer to the worker's pipe (its descriptor is on the command line), shaped
# wrong: the judge must read it as this candidate's FAIL, never crash or say ERROR.
import json
import os
import struct
import sys

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        text = json.dumps({"status": "ok", "ops": 5, "tensors": []}).encode()
        os.write(int(sys.argv[2]), struct.pack("<Q", len(text)) + text)
        return x.sum(dim=1)
