import torch
import functorch
import functorch as ft
from functorch import vmap, grad, jacrev, jacfwd, hessian, vjp, jvp
x = torch.randn(3)
f = lambda t: (t ** 2).sum()
batched = vmap(torch.sin)(torch.randn(2, 3))
g = grad(f)(x)
j = jacrev(torch.sin)(x)
jf = jacfwd(torch.sin)(x)
h = hessian(f)(x)
out, fn = vjp(torch.sin, x)
o2, t2 = jvp(torch.sin, (x,), (x,))
b2 = functorch.vmap(torch.cos, in_dims=0)(torch.randn(2, 3))
g2 = functorch.grad(f)(x)
gv = functorch.grad_and_value(f)(x)
j2 = ft.jacrev(torch.sin)(x)
h2 = ft.hessian(f)(x)


def per_sample_grads(inputs):
    from functorch import vmap as vm, grad as gr
    return vm(gr(f))(inputs)


per_sample_grads(torch.randn(4, 3))
