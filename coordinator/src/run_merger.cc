#include "barrage/coordinator/run_merger.h"
