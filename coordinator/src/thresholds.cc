#include "barrage/coordinator/thresholds.h"
