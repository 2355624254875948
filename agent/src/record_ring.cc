#include "barrage/agent/record_ring.h"
