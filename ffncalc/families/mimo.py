"""Xiaomi's MiMo: Qwen2's layers plus multi-token-prediction layers (custom code, read as data)."""

from __future__ import annotations

from ..schema import LayerIndex
from ..spec import CheckpointExtra, Layer, StoredTensor
from .blocks import mtp_extra
from .qwen import Qwen2Config


class MimoConfig(Qwen2Config):
    """XiaomiMiMo/MiMo (custom code, read as data, never run): Qwen2's layers, plus
    num_nextn_predict_layers multi-token-prediction layers that the causal LM does not run. Each, as
    MiMo's modeling_mimo.py lays it out under model.mtp_layers.{k}: a Qwen2 decoder layer, token and
    hidden RMSNorms, input_proj (2H → H) and a final RMSNorm."""

    architecture = "MiMo"
    config_class = "MiMoConfig"
    default_model_class = "MiMoForCausalLM"

    num_nextn_predict_layers: LayerIndex = 0

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        count = self.num_nextn_predict_layers
        if not count:
            return super().checkpoint_extras()
        hidden = self.hidden_size
        base = self.build_layer(0, None)
        prefix = "model.mtp_layers.{i}"
        layer = Layer(prefix, base.attention, base.ffn, base.norms)
        tensors = (
            StoredTensor(prefix + ".token_layernorm.weight", (hidden,)),
            StoredTensor(prefix + ".hidden_layernorm.weight", (hidden,)),
            StoredTensor(prefix + ".input_proj.weight", (hidden, 2 * hidden)),
            StoredTensor(prefix + ".final_layernorm.weight", (hidden,)),
        )
        reason = f"num_nextn_predict_layers = {count}: a decoder layer, 3 RMSNorms and input_proj (2H → H) each"
        return super().checkpoint_extras() + (mtp_extra(count, 0, layer, tensors, reason),)
