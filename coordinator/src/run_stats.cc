#include "barrage/coordinator/run_stats.h"
