"""FlexAttention helpers written from an outdated recipe."""

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def causal_attention(query, key, value):
    mask = create_block_mask(causal, B=None, H=None, Q_LEN=query.size(-2), KV_LEN=key.size(-2), _compile=True)
    return flex_attention(query, key, value, block_mask=mask)


@torch.compile
def strict_region(x):
    with torch._dynamo.error_on_graph_break():
        return x.sin()
