import torch
import torch.profiler
from torch.profiler import profile, ProfilerActivity
from torch.autograd import profiler as autograd_profiler
x = torch.randn(8, 8)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    y = x @ x
for evt in prof.events():
    total = evt.cuda_time_total
    selft = evt.self_cuda_time_total
    t = evt.cuda_time
    mem = evt.self_cuda_memory_usage
averages = prof.key_averages()
for avg in averages:
    print(avg.key, avg.cuda_time)
events = prof.events()
first = events[0]
print(first.cuda_time_total)
cuda_total = sum(e.cuda_time_total for e in prof.events())
ranked = sorted(prof.events(), key=lambda e: e.self_cuda_time_total, reverse=True)
top = [e.cuda_time for e in prof.key_averages(group_by_input_shape=True)]
with torch.profiler.profile() as p2:
    y = x + 1
stats = {e.key: e.cuda_time for e in p2.key_averages()}
with autograd_profiler.profile() as p3:
    y = x * 2
for e in p3.function_events:
    print(e.cuda_time_total, e.self_cuda_time_total)
for e in p3.key_averages():
    print(e.cuda_time)


def summarize(p):
    rows = p.key_averages()
    return [r.cuda_time for r in rows]


def measure():
    with torch.profiler.profile() as prof4:
        torch.ones(3).sum()
    evs = prof4.events()
    return [ev.cuda_time_total for ev in evs]


measure()
with torch.autograd.profiler.profile() as p5:
    x.sum()
print(p5.self_cpu_time_total)
total5 = p5.key_averages().total_average().cuda_time
summarize(p5)
meta = [ev.event_metadata for ev in p5.function_events]
for ev in prof.events():
    print(ev.metadata_json)
