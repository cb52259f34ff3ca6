import os
import torch.nn.functional as F
