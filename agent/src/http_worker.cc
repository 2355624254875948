#include "barrage/agent/http_worker.h"
