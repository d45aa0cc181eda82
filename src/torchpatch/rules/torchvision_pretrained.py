"""TP600: torchvision models called with pretrained=/pretrained_backbone= (deprecated since torchvision 0.13)."""

from __future__ import annotations

import ast
import re

from torchpatch.rules._helpers import has_double_star, keyword, literal, replace_node
from torchpatch.rules.base import SAFE, Edit, Fix, Invalid, Rule
from torchpatch.versions import v

#: model (relative to torchvision.models) -> (weights for pretrained=True, weights_backbone for
#: pretrained_backbone=True, the module file that defines it). The enum members are the defaults that
#: torchvision's own ``@handle_legacy_interface`` decorator substitutes for ``True`` (read from the 0.29.1
#: wheel's torchvision/models/**.py; the same table as TorchFix 0.7). None: no legacy weights exist.
MODELS = {
    "mobilenet_v2": ('MobileNet_V2_Weights.IMAGENET1K_V1', None, "mobilenetv2"),
    "mobilenet_v3_large": ('MobileNet_V3_Large_Weights.IMAGENET1K_V1', None, "mobilenetv3"),
    "mobilenet_v3_small": ('MobileNet_V3_Small_Weights.IMAGENET1K_V1', None, "mobilenetv3"),
    "densenet121": ('DenseNet121_Weights.IMAGENET1K_V1', None, "densenet"),
    "densenet161": ('DenseNet161_Weights.IMAGENET1K_V1', None, "densenet"),
    "densenet169": ('DenseNet169_Weights.IMAGENET1K_V1', None, "densenet"),
    "densenet201": ('DenseNet201_Weights.IMAGENET1K_V1', None, "densenet"),
    "detection.maskrcnn_resnet50_fpn": ('MaskRCNN_ResNet50_FPN_Weights.COCO_V1', 'ResNet50_Weights.IMAGENET1K_V1', "mask_rcnn"),
    "detection.maskrcnn_resnet50_fpn_v2": ('MaskRCNN_ResNet50_FPN_V2_Weights.COCO_V1', 'ResNet50_Weights.IMAGENET1K_V1', "mask_rcnn"),
    "detection.retinanet_resnet50_fpn": ('RetinaNet_ResNet50_FPN_Weights.COCO_V1', 'ResNet50_Weights.IMAGENET1K_V1', "retinanet"),
    "detection.retinanet_resnet50_fpn_v2": ('RetinaNet_ResNet50_FPN_V2_Weights.COCO_V1', 'ResNet50_Weights.IMAGENET1K_V1', "retinanet"),
    "optical_flow.raft_large": ('Raft_Large_Weights.C_T_SKHT_V2', None, "raft"),
    "optical_flow.raft_small": ('Raft_Small_Weights.C_T_V2', None, "raft"),
    "alexnet": ('AlexNet_Weights.IMAGENET1K_V1', None, "alexnet"),
    "convnext_tiny": ('ConvNeXt_Tiny_Weights.IMAGENET1K_V1', None, "convnext"),
    "convnext_small": ('ConvNeXt_Small_Weights.IMAGENET1K_V1', None, "convnext"),
    "convnext_base": ('ConvNeXt_Base_Weights.IMAGENET1K_V1', None, "convnext"),
    "convnext_large": ('ConvNeXt_Large_Weights.IMAGENET1K_V1', None, "convnext"),
    "inception_v3": ('Inception_V3_Weights.IMAGENET1K_V1', None, "inception"),
    "maxvit_t": ('MaxVit_T_Weights.IMAGENET1K_V1', None, "maxvit"),
    "mnasnet0_5": ('MNASNet0_5_Weights.IMAGENET1K_V1', None, "mnasnet"),
    "mnasnet0_75": ('MNASNet0_75_Weights.IMAGENET1K_V1', None, "mnasnet"),
    "mnasnet1_0": ('MNASNet1_0_Weights.IMAGENET1K_V1', None, "mnasnet"),
    "mnasnet1_3": ('MNASNet1_3_Weights.IMAGENET1K_V1', None, "mnasnet"),
    "detection.fasterrcnn_resnet50_fpn": ('FasterRCNN_ResNet50_FPN_Weights.COCO_V1', 'ResNet50_Weights.IMAGENET1K_V1', "faster_rcnn"),
    "detection.fasterrcnn_resnet50_fpn_v2": ('FasterRCNN_ResNet50_FPN_V2_Weights.COCO_V1', 'ResNet50_Weights.IMAGENET1K_V1', "faster_rcnn"),
    "detection.fasterrcnn_mobilenet_v3_large_320_fpn": ('FasterRCNN_MobileNet_V3_Large_320_FPN_Weights.COCO_V1', 'MobileNet_V3_Large_Weights.IMAGENET1K_V1', "faster_rcnn"),
    "detection.fasterrcnn_mobilenet_v3_large_fpn": ('FasterRCNN_MobileNet_V3_Large_FPN_Weights.COCO_V1', 'MobileNet_V3_Large_Weights.IMAGENET1K_V1', "faster_rcnn"),
    "detection.fcos_resnet50_fpn": ('FCOS_ResNet50_FPN_Weights.COCO_V1', 'ResNet50_Weights.IMAGENET1K_V1', "fcos"),
    "segmentation.lraspp_mobilenet_v3_large": ('LRASPP_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1', 'MobileNet_V3_Large_Weights.IMAGENET1K_V1', "lraspp"),
    "shufflenet_v2_x0_5": ('ShuffleNet_V2_X0_5_Weights.IMAGENET1K_V1', None, "shufflenetv2"),
    "shufflenet_v2_x1_0": ('ShuffleNet_V2_X1_0_Weights.IMAGENET1K_V1', None, "shufflenetv2"),
    "shufflenet_v2_x1_5": ('ShuffleNet_V2_X1_5_Weights.IMAGENET1K_V1', None, "shufflenetv2"),
    "shufflenet_v2_x2_0": ('ShuffleNet_V2_X2_0_Weights.IMAGENET1K_V1', None, "shufflenetv2"),
    "squeezenet1_0": ('SqueezeNet1_0_Weights.IMAGENET1K_V1', None, "squeezenet"),
    "squeezenet1_1": ('SqueezeNet1_1_Weights.IMAGENET1K_V1', None, "squeezenet"),
    "swin_t": ('Swin_T_Weights.IMAGENET1K_V1', None, "swin_transformer"),
    "swin_s": ('Swin_S_Weights.IMAGENET1K_V1', None, "swin_transformer"),
    "swin_b": ('Swin_B_Weights.IMAGENET1K_V1', None, "swin_transformer"),
    "swin_v2_t": ('Swin_V2_T_Weights.IMAGENET1K_V1', None, "swin_transformer"),
    "swin_v2_s": ('Swin_V2_S_Weights.IMAGENET1K_V1', None, "swin_transformer"),
    "swin_v2_b": ('Swin_V2_B_Weights.IMAGENET1K_V1', None, "swin_transformer"),
    "video.s3d": ('S3D_Weights.KINETICS400_V1', None, "s3d"),
    "video.swin3d_t": ('Swin3D_T_Weights.KINETICS400_V1', None, "swin_transformer"),
    "video.swin3d_s": ('Swin3D_S_Weights.KINETICS400_V1', None, "swin_transformer"),
    "video.swin3d_b": ('Swin3D_B_Weights.KINETICS400_V1', None, "swin_transformer"),
    "vit_b_16": ('ViT_B_16_Weights.IMAGENET1K_V1', None, "vision_transformer"),
    "vit_b_32": ('ViT_B_32_Weights.IMAGENET1K_V1', None, "vision_transformer"),
    "vit_l_16": ('ViT_L_16_Weights.IMAGENET1K_V1', None, "vision_transformer"),
    "vit_l_32": ('ViT_L_32_Weights.IMAGENET1K_V1', None, "vision_transformer"),
    "vit_h_14": (None, None, "vision_transformer"),
    "vgg11": ('VGG11_Weights.IMAGENET1K_V1', None, "vgg"),
    "vgg11_bn": ('VGG11_BN_Weights.IMAGENET1K_V1', None, "vgg"),
    "vgg13": ('VGG13_Weights.IMAGENET1K_V1', None, "vgg"),
    "vgg13_bn": ('VGG13_BN_Weights.IMAGENET1K_V1', None, "vgg"),
    "vgg16": ('VGG16_Weights.IMAGENET1K_V1', None, "vgg"),
    "vgg16_bn": ('VGG16_BN_Weights.IMAGENET1K_V1', None, "vgg"),
    "vgg19": ('VGG19_Weights.IMAGENET1K_V1', None, "vgg"),
    "vgg19_bn": ('VGG19_BN_Weights.IMAGENET1K_V1', None, "vgg"),
    "video.mvit_v1_b": ('MViT_V1_B_Weights.KINETICS400_V1', None, "mvit"),
    "video.mvit_v2_s": ('MViT_V2_S_Weights.KINETICS400_V1', None, "mvit"),
    "video.r3d_18": ('R3D_18_Weights.KINETICS400_V1', None, "resnet"),
    "video.mc3_18": ('MC3_18_Weights.KINETICS400_V1', None, "resnet"),
    "video.r2plus1d_18": ('R2Plus1D_18_Weights.KINETICS400_V1', None, "resnet"),
    "regnet_y_400mf": ('RegNet_Y_400MF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_y_800mf": ('RegNet_Y_800MF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_y_1_6gf": ('RegNet_Y_1_6GF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_y_3_2gf": ('RegNet_Y_3_2GF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_y_8gf": ('RegNet_Y_8GF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_y_16gf": ('RegNet_Y_16GF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_y_32gf": ('RegNet_Y_32GF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_y_128gf": (None, None, "regnet"),
    "regnet_x_400mf": ('RegNet_X_400MF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_x_800mf": ('RegNet_X_800MF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_x_1_6gf": ('RegNet_X_1_6GF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_x_3_2gf": ('RegNet_X_3_2GF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_x_8gf": ('RegNet_X_8GF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_x_16gf": ('RegNet_X_16GF_Weights.IMAGENET1K_V1', None, "regnet"),
    "regnet_x_32gf": ('RegNet_X_32GF_Weights.IMAGENET1K_V1', None, "regnet"),
    "resnet18": ('ResNet18_Weights.IMAGENET1K_V1', None, "resnet"),
    "resnet34": ('ResNet34_Weights.IMAGENET1K_V1', None, "resnet"),
    "resnet50": ('ResNet50_Weights.IMAGENET1K_V1', None, "resnet"),
    "resnet101": ('ResNet101_Weights.IMAGENET1K_V1', None, "resnet"),
    "resnet152": ('ResNet152_Weights.IMAGENET1K_V1', None, "resnet"),
    "resnext50_32x4d": ('ResNeXt50_32X4D_Weights.IMAGENET1K_V1', None, "resnet"),
    "resnext101_32x8d": ('ResNeXt101_32X8D_Weights.IMAGENET1K_V1', None, "resnet"),
    "resnext101_64x4d": ('ResNeXt101_64X4D_Weights.IMAGENET1K_V1', None, "resnet"),
    "wide_resnet50_2": ('Wide_ResNet50_2_Weights.IMAGENET1K_V1', None, "resnet"),
    "wide_resnet101_2": ('Wide_ResNet101_2_Weights.IMAGENET1K_V1', None, "resnet"),
    "efficientnet_b0": ('EfficientNet_B0_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "efficientnet_b1": ('EfficientNet_B1_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "efficientnet_b2": ('EfficientNet_B2_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "efficientnet_b3": ('EfficientNet_B3_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "efficientnet_b4": ('EfficientNet_B4_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "efficientnet_b5": ('EfficientNet_B5_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "efficientnet_b6": ('EfficientNet_B6_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "efficientnet_b7": ('EfficientNet_B7_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "efficientnet_v2_s": ('EfficientNet_V2_S_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "efficientnet_v2_m": ('EfficientNet_V2_M_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "efficientnet_v2_l": ('EfficientNet_V2_L_Weights.IMAGENET1K_V1', None, "efficientnet"),
    "googlenet": ('GoogLeNet_Weights.IMAGENET1K_V1', None, "googlenet"),
    "segmentation.deeplabv3_resnet50": ('DeepLabV3_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1', 'ResNet50_Weights.IMAGENET1K_V1', "deeplabv3"),
    "segmentation.deeplabv3_resnet101": ('DeepLabV3_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1', 'ResNet101_Weights.IMAGENET1K_V1', "deeplabv3"),
    "segmentation.deeplabv3_mobilenet_v3_large": ('DeepLabV3_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1', 'MobileNet_V3_Large_Weights.IMAGENET1K_V1', "deeplabv3"),
    "segmentation.fcn_resnet50": ('FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1', 'ResNet50_Weights.IMAGENET1K_V1', "fcn"),
    "segmentation.fcn_resnet101": ('FCN_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1', 'ResNet101_Weights.IMAGENET1K_V1', "fcn"),
    "detection.ssd300_vgg16": ('SSD300_VGG16_Weights.COCO_V1', 'VGG16_Weights.IMAGENET1K_FEATURES', "ssd"),
    "detection.ssdlite320_mobilenet_v3_large": ('SSDLite320_MobileNet_V3_Large_Weights.COCO_V1', 'MobileNet_V3_Large_Weights.IMAGENET1K_V1', "ssdlite"),
}


def _qualnames() -> dict[str, str]:
    """Every qualified name a model builder can be called by -> its key in MODELS."""
    names = {}
    for model, (_, _, module) in MODELS.items():
        package, _, leaf = model.rpartition(".")
        prefix = "torchvision.models" + (f".{package}" if package else "")
        names[f"{prefix}.{leaf}"] = model
        names[f"{prefix}.{module}.{leaf}"] = model
    return names


QUALNAMES = _qualnames()


def _is_weights_value(node: ast.AST) -> bool:
    """Whether a first positional argument is a weights value, not a legacy ``pretrained`` flag: an enum member
    (``ResNet50_Weights.DEFAULT``, the class named ``*_Weights``), a weights name string or ``None``."""
    if type(node) is ast.Constant:
        return node.value is None or isinstance(node.value, str)
    if type(node) is ast.Attribute:
        owner = node.value
        name = owner.attr if type(owner) is ast.Attribute else owner.id if type(owner) is ast.Name else ""
        return name.endswith("_Weights")
    return False


def _literal_bool(node: ast.AST) -> bool | None:
    try:
        value = literal(node)
    except (ValueError, TypeError, SyntaxError):
        return None
    return value if type(value) is bool else None


def _falls_back_from_weights(ctx, call, model: str) -> bool:
    """The call is in an ``except`` handler whose ``try`` calls the same builder with ``weights=``
    (torch-fidelity 0.4: ``try: vgg16(weights=VGG16_Weights.IMAGENET1K_V1)`` / ``except Exception:``
    ``vgg16(pretrained=True)``): the flag is the path for torchvision < 0.13, where ``weights=`` fails."""
    parent = ctx.parent_of(call)
    while parent is not None and type(parent) not in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef):
        if type(parent) is ast.ExceptHandler:
            attempt = ctx.parent_of(parent)
            if any(type(sub) is ast.Call and sub is not call
                   and (keyword(sub, "weights") is not None or keyword(sub, "weights_backbone") is not None)
                   and QUALNAMES.get(ctx.resolves_to(sub.func)) == model
                   for statement in getattr(attempt, "body", ()) for sub in ast.walk(statement)):
                return True
        parent = ctx.parent_of(parent)
    return False


class TorchvisionPretrained(Rule):
    """
    ## What it does
    Flags calls to torchvision model builders (`torchvision.models.resnet50`,
    `torchvision.models.detection.fasterrcnn_resnet50_fpn`, ...) that pass `pretrained=` or
    `pretrained_backbone=`, and rewrites literal `True`/`False` to the `weights=` /
    `weights_backbone=` argument that torchvision itself substitutes.

    ## Why is this bad?
    torchvision 0.13 (released with PyTorch 1.12) replaced the boolean flags with weight enums:
    "The parameter 'pretrained' is deprecated since 0.13 and may be removed in the future, please
    use 'weights' instead" (a `UserWarning`, still in torchvision 0.19 and 0.29, the releases paired
    with PyTorch 2.4 and 2.14). Passing the flag by position is deprecated as well, and so is passing
    the new weights by position (`vgg16(VGG16_Weights.IMAGENET1K_V1)`: torchvision maps the first
    positional argument to `weights` and warns); the fix for that one only adds `weights=`.

    The decorator that keeps the old flags working maps `pretrained=True` to one specific enum
    member (for `resnet50`, `ResNet50_Weights.IMAGENET1K_V1`, not the newer `DEFAULT`), and
    `pretrained=False` to `weights=None`; the fix writes exactly that, so the same weights load.
    Non-literal flags are reported without a fix.
    """

    code = "TP600"
    name = "torchvision-pretrained"
    summary = "torchvision models with `pretrained=`/`pretrained_backbone=` (deprecated since torchvision 0.13)"
    deprecated_in = v("1.12")
    fix_safety = SAFE
    fix_safety_note = (
        "The fix writes the enum member that torchvision's `handle_legacy_interface` substitutes for `True` "
        "(or `None` for `False`), so the same weights are loaded."
    )
    references = (
        "https://docs.pytorch.org/vision/stable/models.html",
        "https://github.com/pytorch/vision/blob/main/torchvision/models/_utils.py",
    )
    torchfix_codes = ("TOR201",)
    calls = frozenset(QUALNAMES)

    VALID = [
        "from torchvision.models import resnet50, ResNet50_Weights\nmodel = resnet50(weights=ResNet50_Weights.DEFAULT)\n",
        "import torchvision\nmodel = torchvision.models.resnet18(weights=None)\n",
        # Look-alikes: timm's and a local builder with the same name.
        "import timm\nmodel = timm.create_model('resnet50', pretrained=True)\n",
        "import torch\ndef resnet50(pretrained=False):\n    return None\nmodel = resnet50(pretrained=True)\n",
    ]
    INVALID = [
        Invalid("from torchvision.models import resnet50\nmodel = resnet50(pretrained=True)\n",
                fixed="from torchvision.models import resnet50\nfrom torchvision.models import ResNet50_Weights\n"
                      "model = resnet50(weights=ResNet50_Weights.IMAGENET1K_V1)\n"),
        Invalid("import torchvision\nmodel = torchvision.models.vgg16(pretrained=False)\n",
                fixed="import torchvision\nmodel = torchvision.models.vgg16(weights=None)\n"),
        Invalid("from torchvision.models import detection\n"
                "model = detection.fasterrcnn_resnet50_fpn(pretrained=False, pretrained_backbone=False)\n",
                fixed="from torchvision.models import detection\n"
                      "model = detection.fasterrcnn_resnet50_fpn(weights=None, weights_backbone=None)\n"),
        Invalid("import torchvision.models as models\nmodel = models.resnet18(pretrained=args.pretrained)\n"),
        # A weights enum by position is deprecated too, as `weights` (not `pretrained`); the keyword keeps it.
        Invalid("import torchvision\nmodel = torchvision.models.vgg16(torchvision.models.VGG16_Weights.IMAGENET1K_V1)\n",
                fixed="import torchvision\n"
                      "model = torchvision.models.vgg16(weights=torchvision.models.VGG16_Weights.IMAGENET1K_V1)\n"),
    ]

    def check_call(self, ctx, call, qualname):
        model = QUALNAMES[qualname]
        if _falls_back_from_weights(ctx, call, model):
            return
        weights, backbone, _ = MODELS[model]
        for old, new, enum, position in (("pretrained", "weights", weights, 0),
                                         ("pretrained_backbone", "weights_backbone", backbone, None)):
            item = keyword(call, old)
            node = item.value if item is not None else None
            target = item
            if node is None and position is not None and len(call.args) > position and not has_double_star(call) \
                    and not isinstance(call.args[position], ast.Starred):
                node = target = call.args[position]
            if node is None:
                continue
            if target is node and _is_weights_value(node):
                yield ctx.diagnostic(node, self._weights_by_position_message(), self._keyword_fix(ctx, call, node))
                continue
            message = (f"`{old}` is deprecated since torchvision 0.13 (PyTorch 1.12), still warning in torchvision 0.29 (the "
                       f"newest release, paired with PyTorch 2.14); "
                       f"use `{new}=`")
            yield ctx.diagnostic(target, message, self._fix(ctx, call, target, node, new, enum, model))

    @staticmethod
    def _weights_by_position_message() -> str:
        # torchvision's ``kwonly_to_pos_or_kw`` maps the first positional argument to ``weights`` and warns
        # "Using 'weights' as positional parameter(s) is deprecated since 0.13" (0.29.2 models/_utils.py).
        return ("the weights passed by position are deprecated since torchvision 0.13 (PyTorch 1.12), still warning in "
                "torchvision 0.29 (the newest release, paired with PyTorch 2.14); pass them as `weights=`")

    @staticmethod
    def _keyword_fix(ctx, call, node):
        if len(call.args) > 1:
            return None  # a keyword cannot stand before the positional arguments that follow it
        return Fix(message="Pass them as `weights=` (the parameter torchvision maps the first positional argument to)",
                   edits=[Edit(ctx.start(node), ctx.start(node), "weights=")], applicability=SAFE)

    def _fix(self, ctx, call, target, node, new, enum, model):
        value = _literal_bool(node)
        if value is None:
            return None
        if target is node and len(call.args) > 1:
            return None  # a positional flag followed by positional arguments cannot become a keyword in place
        if not value:
            return Fix(message=f"Replace with `{new}=None`", edits=[replace_node(ctx, target, f"{new}=None")],
                       applicability=SAFE)
        if enum is None:
            return None
        package = model.rpartition(".")[0] if new == "weights" else ""
        module = "torchvision.models" + (f".{package}" if package else "")
        enum_class, _, member = enum.partition(".")
        # Each weights enum is defined next to its builder (torchvision/models/detection/faster_rcnn.py holds
        # both, and the package re-exports both): ``torchvision.models.detection.fasterrcnn_resnet50_fpn(...)``
        # gets ``torchvision.models.detection.FasterRCNN_..._Weights``, the prefix the call already spells.
        prefix = call.func.value if isinstance(call.func, ast.Attribute) else None
        defining = f"{module}.{MODELS[model][2]}"
        if new == "weights" and prefix is not None and ctx.resolves_to(prefix) in (module, defining) \
                and re.fullmatch(r"[\w.]+", ctx.source(prefix)):
            text, import_edits = f"{ctx.source(prefix)}.{enum_class}", []
        else:
            text, import_edits = ctx.name_for(f"{module}.{enum_class}", module)
        return Fix(message=f"Replace with `{new}={enum_class}.{member}` (the weights `True` loaded)",
                   edits=[*import_edits, replace_node(ctx, target, f"{new}={text}.{member}")], applicability=SAFE)
