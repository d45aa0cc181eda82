import torch
import torch.distributions as D
from torch.distributions import Normal, Categorical, Bernoulli
from torch.distributions.normal import Normal as N2
from torch.utils.data import ConcatDataset, TensorDataset
from torch.utils import data as tud
from torch.utils._pytree import tree_flatten
import torch.utils._pytree as pytree
d = torch.distributions.Normal(torch.zeros(2), torch.ones(2))
s1 = d.sample_n(4)
s2 = Normal(0.0, 1.0).sample_n(3)
cat = Categorical(logits=torch.zeros(5))
s3 = cat.sample_n(10)
b = Bernoulli(probs=torch.tensor(0.3))
s4 = b.sample_n(2)
n2 = N2(0.0, 2.0)
s5 = n2.sample_n(1)
u = D.Uniform(0.0, 1.0)
s6 = u.sample_n(5)
mvn = D.MultivariateNormal(torch.zeros(2), torch.eye(2))
s7 = mvn.sample_n(3)


def draw(mu, sigma, k):
    dist = torch.distributions.Normal(mu, sigma)
    return dist.sample_n(k)


draw(0.0, 1.0, 2)
ds = ConcatDataset([TensorDataset(torch.zeros(3)), TensorDataset(torch.ones(2))])
sizes = ds.cummulative_sizes
sizes2 = tud.ConcatDataset([[1, 2], [3]]).cummulative_sizes
leaves, spec = tree_flatten({"a": 1, "b": [2, 3]})
kids = spec.children_specs
leaves2, spec2 = pytree.tree_flatten((1, 2))
n = len(spec2.children_specs)
flat, tree_spec = torch.utils._pytree.tree_flatten([1, [2]])
for child in tree_spec.children_specs:
    pass
