"""Networks of the families anvil was not built for, as torch modules: wav2vec-style audio
encoders, 3-D video ResNets and diffusion-style UNets. bench/family_bench.py times full-size
ones; tests/models/export_models.py exports small ones (NETWORKS) for the model tests, which
check that every heavy kernel of them takes a strategy or the auto-scheduler.
"""
import torch
from torch import nn


class AudioEncoder(nn.Module):
    """A strided Conv1d feature stack (kernels 10, 3, 3, 3, 3, 2, 2; strides 5, 2, ...) with
    GroupNorm after the first layer and GELU, a grouped Conv1d positional embedding (kernel 31),
    LayerNorm and a projection."""

    def __init__(self, dim):
        super().__init__()
        layers, previous = [], 1
        for i, (kernel, stride) in enumerate([(10, 5), (3, 2), (3, 2), (3, 2), (3, 2), (2, 2),
                                              (2, 2)]):
            layers.append(nn.Conv1d(previous, dim, kernel, stride=stride, bias=False))
            if i == 0:
                layers.append(nn.GroupNorm(dim, dim))
            layers.append(nn.GELU())
            previous = dim
        self.features = nn.Sequential(*layers)
        self.position = nn.Conv1d(dim, dim, 31, padding=15, groups=16)
        self.norm = nn.LayerNorm(dim)
        self.project = nn.Linear(dim, 256)

    def forward(self, x):
        x = self.features(x)
        x = x + nn.functional.gelu(self.position(x))
        return self.project(self.norm(x.transpose(1, 2)))


class ResBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.body = nn.Sequential(nn.GroupNorm(8, cin), nn.SiLU(),
                                  nn.Conv2d(cin, cout, 3, padding=1), nn.GroupNorm(8, cout),
                                  nn.SiLU(), nn.Conv2d(cout, cout, 3, padding=1))
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        return self.skip(x) + self.body(x)


class Attention(nn.Module):
    def __init__(self, dim, heads=4):
        super().__init__()
        self.heads = heads
        self.norm = nn.GroupNorm(8, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        n, c, h, w = x.shape
        t = self.norm(x).flatten(2).transpose(1, 2)
        q, k, v = self.qkv(t).reshape(n, h * w, 3, self.heads,
                                      c // self.heads).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) / (c // self.heads) ** 0.5, dim=-1)
        t = self.out((a @ v).transpose(1, 2).reshape(n, h * w, c))
        return x + t.transpose(1, 2).reshape(n, c, h, w)


class UNet(nn.Module):
    """GroupNorm, SiLU, strided Conv2d down, ConvTranspose2d (stride 2) up, skip
    concatenations and attention at the bottom."""

    def __init__(self, base):
        super().__init__()
        c1, c2, c3 = base, base * 2, base * 4
        self.stem = nn.Conv2d(4, c1, 3, padding=1)
        self.down1 = ResBlock(c1, c1)
        self.pool1 = nn.Conv2d(c1, c1, 3, stride=2, padding=1)
        self.down2 = ResBlock(c1, c2)
        self.pool2 = nn.Conv2d(c2, c2, 3, stride=2, padding=1)
        self.mid = ResBlock(c2, c3)
        self.attn = Attention(c3)
        self.up2 = nn.ConvTranspose2d(c3, c2, 4, stride=2, padding=1)
        self.dec2 = ResBlock(c2 * 2, c2)
        self.up1 = nn.ConvTranspose2d(c2, c1, 4, stride=2, padding=1)
        self.dec1 = ResBlock(c1 * 2, c1)
        self.out = nn.Sequential(nn.GroupNorm(8, c1), nn.SiLU(), nn.Conv2d(c1, 4, 3, padding=1))

    def forward(self, x):
        x1 = self.down1(self.stem(x))
        x2 = self.down2(self.pool1(x1))
        m = self.attn(self.mid(self.pool2(x2)))
        y2 = self.dec2(torch.cat([self.up2(m), x2], 1))
        y1 = self.dec1(torch.cat([self.up1(y2), x1], 1))
        return self.out(y1)


class Video3d(nn.Module):
    """A small 3-D ResNet: a Conv3d stem (3x7x7, spatial stride 2), a 3x3x3 residual block, a
    (2+1)-D block (1x3x3 with spatial stride 2, then 3x1x1), global average pooling and a
    classifier; BatchNorm3d after every convolution."""

    def __init__(self, base):
        super().__init__()
        b1, b2 = base, base * 2

        def unit(cin, cout, kernel, stride, padding):
            return [nn.Conv3d(cin, cout, kernel, stride=stride, padding=padding, bias=False),
                    nn.BatchNorm3d(cout)]

        self.stem = nn.Sequential(*unit(3, b1, (3, 7, 7), (1, 2, 2), (1, 3, 3)), nn.ReLU())
        self.block3d = nn.Sequential(*unit(b1, b1, 3, 1, 1), nn.ReLU(), *unit(b1, b1, 3, 1, 1))
        self.block21 = nn.Sequential(*unit(b1, b2, (1, 3, 3), (1, 2, 2), (0, 1, 1)), nn.ReLU(),
                                     *unit(b2, b2, (3, 1, 1), 1, (1, 0, 0)))
        self.skip = nn.Sequential(*unit(b1, b2, 1, (1, 2, 2), 0))
        self.head = nn.Linear(b2, 10)

    def forward(self, x):
        x = self.stem(x)
        x = torch.relu(x + self.block3d(x))
        x = torch.relu(self.skip(x) + self.block21(x))
        return self.head(x.mean(dim=(2, 3, 4)))


# The small networks of the model tests: name -> (builder, input shape).
NETWORKS = {
    "audio_tiny": (lambda: AudioEncoder(32), (1, 1, 4000)),
    "video_tiny": (lambda: Video3d(8), (1, 3, 4, 32, 32)),
    "unet_tiny": (lambda: UNet(16), (1, 4, 32, 32)),
}
