#!/usr/bin/env python3
"""How much pre-roll a fresh libopus decoder needs to join a continuous decode (docs/WEB.md,
"Without WebCodecs"): encodes a music-like signal (tones, noise, clicks) as the live carrier does
(48 kHz stereo, 10 ms frames, 128 kbit/s, application audio), decodes it once from the start, then
decodes each frame again with a fresh decoder after P frames of pre-roll, and prints the worst
sample difference and the signal-to-error ratio of those frames for each P.

usage: opus-preroll.py [P,P,...] [--no-prediction]   (libopus from Debian's libopus0; no network)
"""
import ctypes
import math
import random
import sys

op = ctypes.CDLL("libopus.so.0")
op.opus_encoder_create.restype = ctypes.c_void_p
op.opus_decoder_create.restype = ctypes.c_void_p
err = ctypes.c_int()
N, FRAMES = 480, 300
enc = op.opus_encoder_create(48000, 2, 2049, ctypes.byref(err))  # OPUS_APPLICATION_AUDIO
op.opus_encoder_ctl(ctypes.c_void_p(enc), 4002, ctypes.c_int(128000))  # OPUS_SET_BITRATE
if "--no-prediction" in sys.argv:
    op.opus_encoder_ctl(ctypes.c_void_p(enc), 4042, ctypes.c_int(1))  # OPUS_SET_PREDICTION_DISABLED
random.seed(1)
pcm = []
for i in range(N * FRAMES):
    t = i / 48000
    v = (0.3 * math.sin(2 * math.pi * 220 * t) + 0.2 * math.sin(2 * math.pi * 1330 * t + 0.3)
         + 0.1 * math.sin(2 * math.pi * 5000 * t) * math.sin(2 * math.pi * 3 * t) + 0.05 * (random.random() - 0.5))
    if i % 24000 < 200:
        v += 0.5 * math.sin(2 * math.pi * 3000 * t)
    pcm += [v, v * 0.8]
packets = []
out = (ctypes.c_ubyte * 1500)()
for f in range(FRAMES):
    frame = (ctypes.c_float * (2 * N))(*pcm[f * 2 * N:(f + 1) * 2 * N])
    n = op.opus_encode_float(ctypes.c_void_p(enc), frame, N, out, 1500)
    packets.append(bytes(out[:n]))


def decode(ps):
    d = op.opus_decoder_create(48000, 2, ctypes.byref(err))
    o = (ctypes.c_float * (2 * 5760))()
    frames = []
    for p in ps:
        b = (ctypes.c_ubyte * len(p)).from_buffer_copy(p)
        n = op.opus_decode_float(ctypes.c_void_p(d), b, len(p), o, 5760, 0)
        frames.append(list(o[:2 * n]))
    op.opus_decoder_destroy(ctypes.c_void_p(d))
    return frames


whole = decode(packets)
flat = [x for f in whole for x in f]
# The decode runs 312 samples (the encoder's lookahead) behind the input.
sse = sum((flat[i + 2 * 312] - pcm[i]) ** 2 for i in range(2 * N * 30, len(flat) - 2 * 312))
sig = sum(pcm[i] ** 2 for i in range(2 * N * 30, len(flat) - 2 * 312))
print("one continuous decode against the input: signal/error %.1f dB, %d bytes a packet on average"
      % (10 * math.log10(sig / sse), sum(map(len, packets)) // len(packets)))
prerolls = [int(x) for x in sys.argv[1].split(",")] if len(sys.argv) > 1 and sys.argv[1][0].isdigit() \
    else [0, 1, 2, 4, 8, 12, 16, 20]
for p in prerolls:
    worst = sse = sig = 0.0
    for start in range(30, FRAMES):
        got = decode(packets[start - p:start + 1])[p]
        ref = whole[start]
        worst = max(worst, max(abs(a - b) for a, b in zip(got, ref)))
        sse += sum((a - b) ** 2 for a, b in zip(got, ref))
        sig += sum(b * b for b in ref)
    print("pre-roll %2d frames (%3d ms): worst |difference| %.5f, signal/error %.1f dB"
          % (p, p * 10, worst, 10 * math.log10(sig / max(sse, 1e-30))))
