"""How the PyTorch peers time GPU work, the same way lathe's benchmarks do: the calls are captured
into one CUDA graph (after an eager warm-up on a side stream, which also lets PyTorch pick its
kernels outside the capture), the graph is replayed once untimed, then `replays` times between
events; the result is the median replay's microseconds divided by the calls in the graph."""
import torch


def graph_replay_us(step, calls_per_graph, replays=9):
    """step() issues calls_per_graph calls on the current stream and returns what must stay alive
    while the graph exists (its outputs). Exceptions from the warm-up or the capture propagate."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        step()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        keep = step()
    graph.replay()
    times = []
    for _ in range(replays):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000.0 / calls_per_graph)
    del keep, graph
    times.sort()
    return times[(len(times) - 1) // 2]
