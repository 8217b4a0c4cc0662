"""The PyTorch side of the examples in this folder: builds a model with
PyTorch's own modules and fixed random weights (nothing is downloaded),
saves its state dict as torch.save does, and the input with PyTorch's output.

  python3 torch_reference.py MODEL DIR [IMAGE]

MODEL is resnet18 (torchvision's, IMAGE x IMAGE inputs, default 224),
encoder (a Transformer encoder classifier) or lstm (an LSTM sequence
classifier). Writes DIR/model.pt and DIR/io.safetensors with "input" and
"output" (eval mode). Needs Debian's python3-torch (and python3-torchvision
for resnet18).
"""
import json
import os
import struct
import sys

import torch
from torch import nn


def write_safetensors(path, tensors):
    """safetensors without the Python package (not in Debian 12)."""
    names = {torch.float32: "F32", torch.int64: "I64"}
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        raw = t.detach().contiguous().numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


class EncoderClassifier(nn.Module):
    """Token ids [batch, seq] -> class logits [batch, 5]: embedding, two
    post-norm encoder layers, mean over the sequence, a linear head."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(100, 32)
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(32, 5)

    def forward(self, tokens):
        return self.head(self.encoder(self.embedding(tokens)).mean(1))


class LstmClassifier(nn.Module):
    """Sequences [batch, seq, 8] -> class logits [batch, 3]: a two-layer
    bidirectional LSTM, its last step, a linear head."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


def main(model_name, directory, image):
    torch.manual_seed(2024)
    if model_name == "resnet18":
        import torchvision
        model = torchvision.models.resnet18(num_classes=1000)
        model.train()
        with torch.no_grad():  # batch statistics that are not the defaults
            for _ in range(2):
                model(torch.randn(4, 3, image, image))
        x = torch.randn(2, 3, image, image)
    elif model_name == "encoder":
        model = EncoderClassifier()
        x = torch.randint(0, 100, (3, 12))
    elif model_name == "lstm":
        model = LstmClassifier()
        x = torch.randn(3, 10, 8)
    else:
        sys.exit(f"torch_reference.py: unknown model '{model_name}' (resnet18, encoder, lstm)")
    model.eval()
    with torch.no_grad():
        y = model(x)
    torch.save(model.state_dict(), os.path.join(directory, "model.pt"))
    write_safetensors(os.path.join(directory, "model.safetensors"), model.state_dict())
    write_safetensors(os.path.join(directory, "io.safetensors"), {"input": x, "output": y})


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 224)
